//! The peer's jobs for streams and round trips: the stream reader and the echo.
//! Handed to a transport (`mode`: a thread, or the `ipcperf __peer` process by the
//! role in its setup); each dispatches once on the mechanism into loops
//! monomorphized for its end. The sync roles' jobs are `sync::peer`'s.

use ipcperf_sys::cpu::current_cpu;

use crate::counts::Meter;
use crate::error::{Error, Result};
use crate::mechanism::{with_mechanism, ByteStream, Mechanism, OPEN_TIMEOUT_MS};
use crate::mode::protocol::{run_job, FromPeer, PeerChannel, PeerRole, PeerSetup, ToPeer};
use crate::payload::AlignedBuf;
use crate::workload::{roundtrip, stream};

/// The stream reader's and the echo's job (the sync roles are `sync::peer`'s).
pub fn serve(ch: &mut dyn PeerChannel, setup: PeerSetup) -> Result<()> {
    run_job(ch, setup, serve_inner)
}

fn serve_inner(ch: &mut dyn PeerChannel, setup: PeerSetup) -> Result<()> {
    with_mechanism!(setup.handoff.kind, M => serve_with::<M>(ch, setup))
}

/// The stream reader's and the echo's job for mechanism `M` (its loops
/// monomorphized for `M`'s end).
fn serve_with<M: Mechanism>(ch: &mut dyn PeerChannel, setup: PeerSetup) -> Result<()> {
    match setup.role {
        PeerRole::EchoMany => super::fanin::serve::<M>(ch, setup),
        PeerRole::Replay => super::replay_peer::follow::<M>(ch, setup),
        PeerRole::SyncPartner | PeerRole::SyncHolder | PeerRole::SyncHolderNoUndo => Err(
            Error::Invalid("a sync role was handed to the stream and echo job".into()),
        ),
        PeerRole::StreamReader => {
            let (wait, kind) = (setup.handoff.opts.wait.server, setup.handoff.kind);
            let mut ep = M::open(setup.handoff, OPEN_TIMEOUT_MS)?;
            crate::mechanism::endpoint::wait_as(&mut ep, wait, kind)?;
            let mut buf = AlignedBuf::new(setup.block_size)?;
            let meter = Meter::open();
            ch.send(FromPeer::Ready { cpu: current_cpu() })?;
            loop {
                match ch.recv()? {
                    ToPeer::Go { bytes } => {
                        let go_ns = ipcperf_sys::clock::now_ns();
                        ep.prepare_series(false)?;
                        let c0 = meter.mark();
                        let (end_ns, lossy) =
                            match M::read_lossy(&mut ep, setup.payload, &mut buf, bytes) {
                                Some(r) => {
                                    let (end, delivered, counts) = r?;
                                    (end, Some((delivered, counts)))
                                }
                                None => (
                                    stream::read_stream(setup.payload, &mut ep, &mut buf, bytes)?,
                                    None,
                                ),
                            };
                        let (cpu_ns, counts) = meter.since(&c0);
                        ch.send(FromPeer::Done {
                            end_ns,
                            cpu: current_cpu(),
                            cpu_ns,
                            counts: Some(counts),
                            delivered: lossy.map(|l| l.0),
                            datagrams: lossy.map(|l| l.1),
                            since_go_ns: Some(end_ns.saturating_sub(go_ns)),
                        })?;
                    }
                    ToPeer::Quit => return Ok(()),
                    ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
                    ToPeer::Rounds { .. } | ToPeer::Replay { .. } => {
                        return Err(Error::Peer("round trips asked of a stream reader".into()))
                    }
                }
            }
        }
        PeerRole::Echo => {
            let (wait, kind) = (setup.handoff.opts.wait.server, setup.handoff.kind);
            let fwd = M::open(setup.handoff, OPEN_TIMEOUT_MS)?;
            let back = match setup.back {
                Some(h) => Some(M::open(*h, OPEN_TIMEOUT_MS)?),
                None => None,
            };
            let mut end = super::duplex::Duplex::for_peer(fwd, back);
            end.wait_as(wait, kind)?;
            let mut buf = AlignedBuf::new(setup.block_size)?;
            // One-way: this side's clock cost is the tare of each delay it measures.
            let tare = if setup.one_way {
                ipcperf_sys::clock::clock_cost_ns(20_001)
            } else {
                0
            };
            let mut delays: Vec<u64> = Vec::new();
            let meter = Meter::open();
            ch.send(FromPeer::Ready { cpu: current_cpu() })?;
            loop {
                match ch.recv()? {
                    ToPeer::Rounds { n } => {
                        if setup.one_way {
                            // Room for every delay before the series, none grown in it
                            // (the round-trip samples are capped at 64M the same way).
                            delays.clear();
                            delays.reserve_exact((n as usize).min(1 << 26));
                        }
                        let c0 = meter.mark();
                        let echoed = crate::with_duplex!(&mut end, e => roundtrip::echo(
                            setup.payload,
                            e,
                            &mut buf,
                            n,
                            setup.one_way.then_some(&mut delays)
                        ))?;
                        let (cpu_ns, counts) = meter.since(&c0);
                        let one_way = setup.one_way.then(|| {
                            let mut h = crate::latency::new_one_way_histogram();
                            crate::latency::record_samples(&mut h, &delays, tare);
                            (crate::latency::HistogramRecord::from_histogram(&h), tare)
                        });
                        ch.send(FromPeer::Echoed {
                            echoed,
                            cpu: current_cpu(),
                            cpu_ns,
                            datagrams: M::take_datagram_counts(end.rx()),
                            one_way,
                            counts: Some(counts),
                        })?;
                    }
                    ToPeer::Quit => return Ok(()),
                    ToPeer::Hello(_) => return Err(Error::Peer("a second hello".into())),
                    ToPeer::Go { .. } | ToPeer::Replay { .. } => {
                        return Err(Error::Peer(
                            "a stream or a replay asked of an echo peer".into(),
                        ))
                    }
                }
            }
        }
    }
}
