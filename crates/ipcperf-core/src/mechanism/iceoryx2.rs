//! iceoryx2 (eclipse-iceoryx's zero-copy middleware), publish-subscribe: one
//! service per direction, a publisher and a subscriber on each side. A write
//! copies the block into a slice loaned in the shared memory and sends it, then
//! loans the next one at once (as iceoryx2's own benchmark loans before it
//! waits, so the loan is off the path of the answer); a read takes the next
//! sample and copies it out (the payload touched as every mechanism's is). The
//! subscriber busy-polls (`receive` in a loop): iceoryx2's
//! own fastest wait, named `spin` in the record, one CPU busy while it waits.
//!
//! Every file iceoryx2 makes is ours by name: its root folder is the case's
//! private directory and its prefix `ipcperf-<pid>-<seq>-`, so the shared-memory
//! segments of a killed run are orphans `ipcperf clean` knows.
//! No sample is lost: overflow is off and a full subscriber holds the publisher,
//! which gives up (an error) once the peer died or the wait passed its bound.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use iceoryx2::port::update_connections::UpdateConnections;
use iceoryx2::port::{BackpressureAction, BackpressureInfo};
use iceoryx2::prelude::*;

use super::endpoint::{SpinBound, WAIT_MS};
use super::info::TWO_SIDES;
use super::{
    ByteStream, Iox2Place, Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind,
    PeerAddr, PeerHandoff, RoundTripShape,
};
use crate::error::{Error, Result};
use ipcperf_sys::names::PrivateDir;

/// The crate and version every result names.
pub const LIBRARY: &str = "iceoryx2 0.10.0";
/// Samples a subscriber holds before its publisher waits.
const BUFFER: usize = 8;

type Pub = iceoryx2::port::publisher::Publisher<ipc_threadsafe::Service, [u8], ()>;
type Sub = iceoryx2::port::subscriber::Subscriber<ipc_threadsafe::Service, [u8], ()>;
type Smp = iceoryx2::sample::Sample<ipc_threadsafe::Service, [u8], ()>;
type Loan = iceoryx2::sample_mut_uninit::SampleMutUninit<
    ipc_threadsafe::Service,
    [core::mem::MaybeUninit<u8>],
    (),
>;

/// One side: its node, its publisher and subscriber, the sample being read.
pub struct Iox2End {
    // Dropped in this order: the samples, the ports, then the services, then the node.
    reading: Option<(Smp, usize)>,
    /// The next message's loan, taken as soon as one was sent (as iceoryx2's
    /// own benchmark loans before it waits): its length is the last one's.
    next: Option<Loan>,
    publisher: Pub,
    subscriber: Sub,
    _services: Vec<Box<dyn std::any::Any + Send>>,
    _node: Node<ipc_threadsafe::Service>,
    max: usize,
    peer_dead: Arc<AtomicBool>,
}

impl std::fmt::Debug for Iox2End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Iox2End(max {} B)", self.max)
    }
}

fn failed(op: &str, e: impl std::fmt::Debug) -> Error {
    Error::Peer(format!("iceoryx2: {op}: {e:?}"))
}

impl ByteStream for Iox2End {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        for chunk in buf.chunks(self.max) {
            let s = match self.next.take() {
                Some(s) if s.payload().len() == chunk.len() => s,
                ahead => {
                    drop(ahead);
                    self.publisher
                        .loan_slice_uninit(chunk.len())
                        .map_err(|e| failed("loan", e))?
                }
            };
            let s = s.write_from_slice(chunk);
            s.send().map_err(|e| {
                if self.peer_dead.load(Ordering::Relaxed) {
                    Error::Peer("iceoryx2: the other side died".into())
                } else {
                    failed("send", e)
                }
            })?;
            // A loan that fails now (every sample out) is taken again, and its
            // error reported, when the next message is written.
            self.next = self.publisher.loan_slice_uninit(chunk.len()).ok();
        }
        Ok(())
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.reading.is_none() {
            let mut bound = SpinBound::new();
            let s = loop {
                match self.subscriber.receive() {
                    Ok(Some(s)) => break s,
                    Ok(None) => {}
                    Err(e) => return Err(failed("receive", e)),
                }
                if !bound.again(WAIT_MS as u64) {
                    return Err(Error::Timeout(format!(
                        "iceoryx2: no sample within {WAIT_MS} ms"
                    )));
                }
                if self.peer_dead.load(Ordering::Relaxed) {
                    return Err(Error::Peer("iceoryx2: the other side died".into()));
                }
            };
            self.reading = Some((s, 0));
        }
        let (s, off) = self.reading.as_mut().expect("set above");
        let p = s.payload();
        let n = super::endpoint::hand_out(p, off, buf);
        if *off == p.len() {
            self.reading = None;
        }
        Ok(n)
    }

    fn set_busy_poll(&mut self) -> Result<bool> {
        Ok(true)
    }
}

fn config(place: &Iox2Place) -> Result<Config> {
    let mut c = Config::default();
    c.global
        .set_root_path(&Path::new(place.root.as_bytes()).map_err(|e| failed("root path", e))?);
    c.global.prefix = FileName::new(place.prefix.as_bytes()).map_err(|e| failed("prefix", e))?;
    Ok(c)
}

fn open(place: Iox2Place, timeout_ms: i32, dead: Arc<AtomicBool>) -> Result<Iox2End> {
    let cfg = config(&place)?;
    let node = NodeBuilder::new()
        .config(&cfg)
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<ipc_threadsafe::Service>()
        .map_err(|e| failed("node", e))?;
    let service = |dir: &str| {
        let name: ServiceName = format!("{}/{dir}", place.service)
            .as_str()
            .try_into()
            .map_err(|e| failed("service name", e))?;
        node.service_builder(&name)
            .publish_subscribe::<[u8]>()
            .enable_safe_overflow(false)
            .subscriber_max_buffer_size(BUFFER)
            .history_size(0)
            .max_publishers(1)
            .max_subscribers(1)
            .open_or_create()
            .map_err(|e| failed("service", e))
    };
    let (mine, theirs) = if place.owner { ("a", "b") } else { ("b", "a") };
    let out = service(mine)?;
    let inn = service(theirs)?;
    let gone = dead.clone();
    let publisher = out
        .publisher_builder()
        .initial_max_slice_len(place.max)
        .set_backpressure_handler(move |i: &BackpressureInfo| {
            if gone.load(Ordering::Relaxed)
                || i.elapsed_time > Duration::from_millis(WAIT_MS as u64)
            {
                BackpressureAction::DiscardDataAndFail
            } else {
                BackpressureAction::Retry
            }
        })
        .create()
        .map_err(|e| failed("publisher", e))?;
    let subscriber = inn
        .subscriber_builder()
        .buffer_size(BUFFER)
        .create()
        .map_err(|e| failed("subscriber", e))?;
    // A sample sent before the other side subscribes is lost: wait (bounded)
    // until it has, both ways.
    let t0 = std::time::Instant::now();
    while out.dynamic_config().number_of_subscribers() == 0
        || inn.dynamic_config().number_of_publishers() == 0
    {
        if t0.elapsed() > Duration::from_millis(timeout_ms.max(0) as u64) {
            return Err(Error::Timeout(format!(
                "iceoryx2: the other side did not open its ports within {timeout_ms} ms"
            )));
        }
        if dead.load(Ordering::Relaxed) {
            return Err(Error::Peer("iceoryx2: the other side died".into()));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    publisher
        .update_connections()
        .map_err(|e| failed("connect", e))?;
    Ok(Iox2End {
        reading: None,
        next: None,
        publisher,
        subscriber,
        _services: vec![Box::new(out), Box::new(inn)],
        _node: node,
        max: place.max,
        peer_dead: dead,
    })
}

fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
    let dir = PrivateDir::create(&opts.base_dir(), "iox2")?;
    let root = format!("{}/", dir.path().display());
    let prefix = format!(
        "{}-",
        dir.path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| ipcperf_sys::names::unique("iox2"))
    );
    let dead = Arc::new(AtomicBool::new(false));
    let (flag, guard) = super::in_process::keep(dead.clone());
    let place = |owner: bool| Iox2Place {
        root: root.clone(),
        prefix: prefix.clone(),
        service: "ipcperf".into(),
        max: block.clamp(1, 1 << 24),
        owner,
        flag: owner.then_some(flag),
    };
    let handoff = |owner: bool| PeerHandoff {
        kind: MechanismKind::Iceoryx2,
        addr: PeerAddr::Iceoryx2(Box::new(place(owner))),
        opts: opts.clone(),
        fds: Vec::new(),
    };
    let mut link = Link::new(
        MechanismKind::Iceoryx2,
        opts,
        Some(LocalEnd::Handoff(Box::new(handoff(true)))),
        Some(handoff(false)),
        Some(dir),
    );
    link.guards.push(Box::new(guard));
    link.guards.push(Box::new(LeftInShm::new(prefix)));
    link.on_peer_death
        .push(Box::new(move || dead.store(true, Ordering::Relaxed)));
    Ok(link)
}

/// Removes what iceoryx2 leaves in /dev/shm under the case's prefix (its
/// global management segment outlives the nodes) when the link goes, and on
/// Ctrl-C through the cleanup registry.
struct LeftInShm(
    String,
    #[allow(dead_code)] ipcperf_sys::cleanup::Registration,
);

impl LeftInShm {
    fn new(prefix: String) -> LeftInShm {
        let p = prefix.clone();
        let reg =
            ipcperf_sys::cleanup::register(ipcperf_sys::cleanup::Undo::Call(Box::new(move || {
                remove_prefixed(&p)
            })));
        LeftInShm(prefix, reg)
    }
}

fn remove_prefixed(prefix: &str) {
    for e in std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
    {
        if e.file_name().to_string_lossy().starts_with(prefix) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl Drop for LeftInShm {
    fn drop(&mut self) {
        remove_prefixed(&self.0);
    }
}

/// iceoryx2 publish-subscribe, each way.
pub struct Iceoryx2;

impl Mechanism for Iceoryx2 {
    type End = Iox2End;
    const POLLS: bool = false;

    const INFO: MechanismInfo = MechanismInfo {
        kind: MechanismKind::Iceoryx2,
        name: "iceoryx2",
        summary: "iceoryx2 publish-subscribe each way (loaned slices in shared memory; the \
                  subscriber busy-polls)",
        modes: TWO_SIDES,
        solo: false,
        reader_after_writer: false,
        names: "iceoryx2's files under a private directory; ipcperf-<pid>-... in /dev/shm",
        base: Some(MechanismKind::Shm),
        library: Some(LIBRARY),
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(opts, block)
    }

    fn open(h: PeerHandoff, timeout_ms: i32) -> Result<Iox2End> {
        match h.addr {
            PeerAddr::Iceoryx2(place) => {
                let dead = match place.flag {
                    Some(id) => super::in_process::take::<Arc<AtomicBool>>(id)
                        .unwrap_or_else(|| Arc::new(AtomicBool::new(false))),
                    None => Arc::new(AtomicBool::new(false)),
                };
                open(*place, timeout_ms.max(2000), dead)
            }
            other => Err(Error::Peer(format!("iceoryx2 cannot open {other:?}"))),
        }
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn wait_label(_opts: &MechOptions) -> String {
        "spin".into()
    }
}
