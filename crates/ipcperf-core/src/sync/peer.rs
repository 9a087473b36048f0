//! The other side of a sync case, in a thread or in an `ipcperf __peer` process:
//! the set/clear partner (answers every token) or the holder of a robustness test
//! (takes the lock and keeps it until it is killed).

use super::ends::{Ends, Side, WAIT_TIMEOUT};
use crate::error::{Error, Result};
use crate::mode::protocol::{FromPeer, PeerChannel, PeerRole, PeerSetup, ToPeer};
use ipcperf_sys::clock::now_ns;
use ipcperf_sys::cpu::current_cpu;

fn partner<C: super::ends::Channel>(ch: &mut dyn PeerChannel, c: &mut C) -> Result<()> {
    let meter = crate::counts::Meter::open();
    ch.send(FromPeer::Ready { cpu: current_cpu() })?;
    loop {
        match ch.recv()? {
            ToPeer::Go { bytes: n } => {
                let mark = meter.mark();
                super::loops::pong(c, n)?;
                let end_ns = now_ns();
                let (cpu_ns, counts) = meter.since(&mark);
                ch.send(FromPeer::Done {
                    end_ns,
                    cpu: current_cpu(),
                    cpu_ns,
                    delivered: None,
                    datagrams: None,
                    since_go_ns: None,
                    counts: Some(counts),
                })?;
            }
            ToPeer::Quit => return Ok(()),
            ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
            ToPeer::Rounds { .. } | ToPeer::Replay { .. } => {
                return Err(Error::Peer("round trips asked of a sync peer".into()))
            }
        }
    }
}

fn holder<L: super::ends::Lock>(ch: &mut dyn PeerChannel, l: &mut L) -> Result<()> {
    if l.acquire_within(WAIT_TIMEOUT)?.is_none() {
        return Err(Error::Timeout("the holder could not take the lock".into()));
    }
    ch.send(FromPeer::Ready { cpu: current_cpu() })?;
    // Hold it until killed (or told to quit, then give it back).
    loop {
        match ch.recv()? {
            ToPeer::Quit => return l.release(),
            ToPeer::Go { .. } => {}
            ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
            ToPeer::Rounds { .. } | ToPeer::Replay { .. } => {
                return Err(Error::Peer("round trips asked of a sync peer".into()))
            }
        }
    }
}

/// The sync roles' job: serve one until told to quit.
pub fn serve(ch: &mut dyn PeerChannel, setup: PeerSetup) -> Result<()> {
    crate::mode::protocol::run_job(ch, setup, serve_inner)
}

fn serve_inner(ch: &mut dyn PeerChannel, mut setup: PeerSetup) -> Result<()> {
    // The transport says whether the owner is another process.
    let owner = ch.owner_process();
    let sync = *setup
        .sync
        .take()
        .ok_or_else(|| Error::Peer("a sync role without its sync setup".into()))?;
    let fds = std::mem::take(&mut setup.handoff.fds);
    let mut ends = Ends::open(&sync, fds)?;
    match setup.role {
        PeerRole::SyncPartner => {
            let mut c = ends.channel(Side::B)?;
            if let Some(pid) = owner {
                c.set_other_process(pid);
            }
            crate::with_channel!(&mut c, |c| partner(ch, c)).unwrap_or_else(|| {
                Err(Error::Invalid(format!(
                    "{}: no set/clear",
                    sync.primitive.name()
                )))
            })
        }
        PeerRole::SyncHolder | PeerRole::SyncHolderNoUndo => {
            let mut l = ends.lock()?;
            if setup.role == PeerRole::SyncHolderNoUndo {
                l = l.without_undo();
            }
            crate::with_lock!(&mut l, |l| holder(ch, l)).unwrap_or_else(|| {
                Err(Error::Invalid(format!(
                    "{}: not a lock",
                    sync.primitive.name()
                )))
            })
        }
        PeerRole::StreamReader | PeerRole::Echo | PeerRole::EchoMany | PeerRole::Replay => {
            Err(Error::Peer("not a sync role".into()))
        }
    }
}
