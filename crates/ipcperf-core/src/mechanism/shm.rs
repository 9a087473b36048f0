//! `shm`: the single-producer single-consumer ring of [`super::shm_ring`] as a
//! mechanism. The memory is a memfd handed over with the other descriptors (a
//! thread, or a peer process through SCM_RIGHTS), or with `--shm-named` a POSIX
//! object `/ipcperf-<pid>-...` the peer opens by name (owned by the link's guard:
//! removed on success, error, Ctrl-C and peer death).

use super::info::TWO_SIDES;
use super::shm_ring::ShmRing;
use super::shm_ring::{rec_size, RingObject, Wake};
use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};

/// The ring's default capacity: 1 MiB, or 4 blocks when that is more (a copying
/// writer waits for room for its whole block). Zero-copy too, though it builds
/// blocks in 64 KiB steps: with 1 MiB blocks in a 1 MiB ring every line it fills
/// was just read by the other CPU, and on an AMD EPYC guest that ran at 11-13
/// GB/s against 54-56 GB/s in 4 MiB (the copying ring: 31-32 GB/s).
pub fn capacity_for(opts: &MechOptions, block: usize) -> usize {
    opts.shm_capacity
        .unwrap_or_else(|| (block.saturating_mul(4)).max(1 << 20).next_power_of_two())
}

/// Round trips of messages up to this size, in the message layout at the default
/// capacity, use a ring of one slot (see [`round_trip_ring`]).
const ONE_SLOT_MAX: usize = 1024;

/// A round trip's ring: its capacity, and whether it is one slot. A round trip
/// has one message in flight each way, so a small ring loses no overlap, and the
/// fewer places a message can lie, the fewer lines move between the two CPUs'
/// caches. So, at the default capacity and for messages up to 64 KiB:
/// - the message layout up to 1 KiB: one slot, every record the whole ring (the
///   least power of two >= 512 B that holds one), so a message lies where the
///   last one did, as in a cache-line ping-pong;
/// - else room for four records of the message, from 512 B to one page (bigger
///   messages split into records of a quarter of it).
///
/// Bigger messages, zero-copy and a capacity the user names take
/// [`capacity_for`]'s. Measured side by side on a 2-vCPU KVM guest (processes,
/// spin, p50 + tare): 64 B 140-150 ns in 512 B (one slot or four), 161-180 in
/// 4 KiB, 170-190 in 1 MiB; 512 B 180-201 in one 1 KiB slot, 201-240 in 4 KiB
/// (seven places), 281-300 in 2 KiB (split), 341-361 in 1 MiB; 4 KiB 741-761 in
/// 4 KiB (five records, the reader copying one while the writer fills the next)
/// against 1212-1232 in 1 MiB; 64 KiB 10.0-10.4 us in 4 KiB against 11.9-63 us
/// in 1 MiB. At 1 MiB the whole message in the ring (4 MiB) is the fastest.
pub fn round_trip_ring(opts: &MechOptions, block: usize) -> (usize, bool) {
    if opts.shm_capacity.is_some() || opts.shm_zero_copy || block > 64 << 10 {
        return (capacity_for(opts, block), false);
    }
    let record = rec_size(block);
    if opts.shm_messages && block <= ONE_SLOT_MAX {
        return (record.next_power_of_two().max(512), true);
    }
    ((4 * record).next_power_of_two().clamp(512, 4096), false)
}

fn setup_round_trip(opts: &MechOptions, block: usize) -> Result<Link> {
    let (capacity, one_slot) = round_trip_ring(opts, block);
    first_link(setup_readers(opts, capacity, 1, one_slot))
}

fn first_link(links: Result<Vec<Link>>) -> Result<Link> {
    links?
        .into_iter()
        .next()
        .ok_or_else(|| Error::Invalid("a ring without its link".into()))
}

fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
    first_link(setup_readers(opts, capacity_for(opts, block), 1, false))
}

/// The ring of `capacity` bytes read by `readers` readers: a link per reader,
/// its peer handoff that reader's end; the first also holds the writer's end and
/// the object.
fn setup_readers(
    opts: &MechOptions,
    capacity: usize,
    readers: usize,
    one_slot: bool,
) -> Result<Vec<Link>> {
    let wake = opts.shm_wake.unwrap_or(Wake::Futex);
    let spin = opts.shm_spin_ns.unwrap_or(super::shm_ring::DEFAULT_SPIN_NS);
    let obj = RingObject::create_with_spin(capacity, wake, opts.shm_named, spin)?
        .lend_in_place(opts.shm_zero_copy)
        .messages(opts.shm_messages)?
        .one_slot(one_slot)?
        .fan_out(readers)?;
    let end = |producer: bool, cursor: usize, obj: &RingObject| -> Result<PeerHandoff> {
        let mut ring = obj.handoff.clone();
        ring.cursor = cursor;
        Ok(PeerHandoff {
            kind: MechanismKind::Shm,
            addr: PeerAddr::Shm { ring, producer },
            opts: opts.clone(),
            fds: obj.end_fds()?,
        })
    };
    let mut others = Vec::with_capacity(readers.saturating_sub(1));
    for i in 1..readers {
        let mut l = Link::new(
            MechanismKind::Shm,
            opts,
            None,
            Some(end(false, i, &obj)?),
            None,
        );
        l.on_peer_death.push(Box::new(obj.on_peer_death()?));
        others.push(l);
    }
    let mut link = Link::new(
        MechanismKind::Shm,
        opts,
        Some(LocalEnd::Handoff(Box::new(end(true, 0, &obj)?))),
        Some(end(false, 0, &obj)?),
        None,
    );
    if readers > 1 {
        link.facts.push((
            "fan_out".into(),
            format!("one ring, {readers} readers with a cursor each"),
        ));
    }
    link.facts
        .push(("ring_capacity".into(), obj.handoff.capacity.to_string()));
    if one_slot {
        link.facts.push(("ring_slots".into(), "1".into()));
    }
    if let Some(n) = &obj.handoff.name {
        link.facts.push(("shm_name".into(), n.clone()));
    }
    link.on_peer_death.push(Box::new(obj.on_peer_death()?));
    link.guards.push(Box::new(obj));
    others.insert(0, link);
    Ok(others)
}

/// The shared-memory ring.
pub struct Shm;

impl Mechanism for Shm {
    type End = ShmRing;

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        names: "none (memfd); /ipcperf-<pid>-...-ring with --shm-named",
        ..MechanismInfo::new(MechanismKind::Shm, "shm", "SPSC ring in shared memory (memfd; --shm-named: POSIX object); --wake spin|futex|eventfd|sem|adaptive")
    };

    const POLLS: bool = false;

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(opts, block)
    }

    fn setup_round_trip(opts: &MechOptions, block: usize) -> Result<Link> {
        setup_round_trip(opts, block)
    }

    fn setup_back(opts: &MechOptions, block: usize) -> Result<Link> {
        setup_round_trip(opts, block)
    }

    fn open(mut h: PeerHandoff, _timeout_ms: i32) -> Result<ShmRing> {
        let fds = std::mem::take(&mut h.fds);
        match &h.addr {
            PeerAddr::Shm { ring, producer } => ShmRing::open_end(ring, fds, *producer),
            other => Err(Error::Peer(format!("shm cannot open {other:?}"))),
        }
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::OneWayPair)
    }

    fn setup_fan_out(
        opts: &MechOptions,
        block: usize,
        readers: usize,
    ) -> Option<Result<Vec<Link>>> {
        Some(setup_readers(
            opts,
            capacity_for(opts, block),
            readers,
            false,
        ))
    }

    fn has_message(end: &mut ShmRing) -> Option<Result<bool>> {
        Some(Ok(end.has_data()))
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        out.push((
            "memory".into(),
            if opts.shm_named { "posix-shm" } else { "memfd" }.into(),
        ));
        if let Some(c) = opts.shm_capacity {
            out.push(("ring_capacity".into(), c.to_string()));
        }
        if opts.shm_zero_copy {
            out.push(("zero_copy".into(), "true".into()));
        }
        out.push((
            "ring_layout".into(),
            if opts.shm_messages {
                "message"
            } else {
                "stream"
            }
            .into(),
        ));
        if opts.shm_wake == Some(Wake::Adaptive) {
            let ns = opts.shm_spin_ns.unwrap_or(super::shm_ring::DEFAULT_SPIN_NS);
            out.push(("spin_ns".into(), ns.to_string()));
        }
    }

    fn wait_label(opts: &MechOptions) -> String {
        opts.shm_wake.unwrap_or(Wake::Futex).name().into()
    }
}
