//! iceoryx2 (eclipse-iceoryx's zero-copy middleware), publish-subscribe: one
//! service per direction, a publisher and a subscriber on each side. A write
//! copies the block into a slice loaned in the shared memory and sends it, then
//! loans the next one at once (as iceoryx2's own benchmark loans before it
//! waits, so the loan is off the path of the answer); a read takes the next
//! sample and copies it out (the payload touched as every mechanism's is). The
//! subscriber busy-polls (`receive` in a loop): iceoryx2's
//! own fastest wait, named `spin` in the record, one CPU busy while it waits.
//!
//! With `iox2_request_response` (`--request-response`), round trips go by
//! iceoryx2's request-response pattern instead: one service, the owner's side a
//! client whose write sends a request and whose read takes its response, the
//! peer's a server that takes a request and responds to it (loaned slices both
//! ways, busy-polled, one request in flight so none can overflow). Streams stay
//! publish-subscribe; a stream asked of request-response is refused.
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
type Client = iceoryx2::port::client::Client<ipc_threadsafe::Service, [u8], (), [u8], ()>;
type Server = iceoryx2::port::server::Server<ipc_threadsafe::Service, [u8], (), [u8], ()>;
type Pending =
    iceoryx2::pending_response::PendingResponse<ipc_threadsafe::Service, [u8], (), [u8], ()>;
type Resp = iceoryx2::response::Response<ipc_threadsafe::Service, [u8], ()>;
type Active = iceoryx2::active_request::ActiveRequest<ipc_threadsafe::Service, [u8], (), [u8], ()>;
type Loan = iceoryx2::sample_mut_uninit::SampleMutUninit<
    ipc_threadsafe::Service,
    [core::mem::MaybeUninit<u8>],
    (),
>;

/// One side: its node, its ports, the message being read.
pub struct Iox2End {
    // Dropped in this order: the ports and messages, then the services, then the node.
    ports: Ports,
    _services: Vec<Box<dyn std::any::Any + Send>>,
    _node: Node<ipc_threadsafe::Service>,
    max: usize,
    peer_dead: Arc<AtomicBool>,
}

/// A side's ports, by pattern.
enum Ports {
    /// Publish-subscribe each way.
    PubSub {
        reading: Option<(Smp, usize)>,
        /// The next message's loan, taken as soon as one was sent (as
        /// iceoryx2's own benchmark loans before it waits): its length is the
        /// last one's.
        next: Option<Loan>,
        publisher: Pub,
        subscriber: Sub,
    },
    /// The asking side of request-response: a write sends a request, a read
    /// takes its response.
    Client {
        reading: Option<(Resp, usize)>,
        pending: Option<Pending>,
        client: Client,
    },
    /// The answering side: a read takes the next request, a write responds to it.
    Server {
        active: Option<(Active, usize)>,
        server: Server,
    },
}

impl std::fmt::Debug for Iox2End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Iox2End(max {} B)", self.max)
    }
}

fn failed(op: &str, e: impl std::fmt::Debug) -> Error {
    Error::Peer(format!("iceoryx2: {op}: {e:?}"))
}

impl Iox2End {
    /// Poll `take` until it yields (bounded; a dead peer ends the wait at once).
    #[inline]
    fn poll<T>(
        dead: &AtomicBool,
        what: &str,
        mut take: impl FnMut() -> Result<Option<T>>,
    ) -> Result<T> {
        let mut bound = SpinBound::new();
        loop {
            if let Some(v) = take()? {
                return Ok(v);
            }
            if !bound.again(WAIT_MS as u64) {
                return Err(Error::Timeout(format!(
                    "iceoryx2: no {what} within {WAIT_MS} ms"
                )));
            }
            if dead.load(Ordering::Relaxed) {
                return Err(Error::Peer("iceoryx2: the other side died".into()));
            }
        }
    }

    fn sent(&self, what: &str, e: impl std::fmt::Debug) -> Error {
        if self.peer_dead.load(Ordering::Relaxed) {
            Error::Peer("iceoryx2: the other side died".into())
        } else {
            failed(what, e)
        }
    }
}

/// Hand out the next piece of the message being read (which must be there)
/// into `buf`, and let the message go once all of it has been handed out.
#[inline]
fn hand_out_and_release<M>(
    reading: &mut Option<(M, usize)>,
    payload: impl Fn(&M) -> &[u8],
    buf: &mut [u8],
) -> Result<usize> {
    let Some((m, off)) = reading.as_mut() else {
        return Err(Error::Invalid("iceoryx2: no message is being read".into()));
    };
    let p = payload(m);
    let n = super::endpoint::hand_out(p, off, buf);
    if *off == p.len() {
        *reading = None;
    }
    Ok(n)
}

impl ByteStream for Iox2End {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        let max = self.max;
        match &mut self.ports {
            Ports::PubSub {
                next, publisher, ..
            } => {
                for chunk in buf.chunks(max) {
                    let s = match next.take() {
                        Some(s) if s.payload().len() == chunk.len() => s,
                        ahead => {
                            drop(ahead);
                            publisher
                                .loan_slice_uninit(chunk.len())
                                .map_err(|e| failed("loan", e))?
                        }
                    };
                    let s = s.write_from_slice(chunk);
                    if let Err(e) = s.send() {
                        return Err(self.sent("send", e));
                    }
                    // A loan that fails now (every sample out) is taken again, and
                    // its error reported, when the next message is written.
                    *next = publisher.loan_slice_uninit(chunk.len()).ok();
                }
                Ok(())
            }
            Ports::Client {
                pending, client, ..
            } => {
                if pending.is_some() || buf.len() > max {
                    return Err(Error::Invalid(
                        "iceoryx2 request-response carries one request of at most a block \
                         at a time"
                            .into(),
                    ));
                }
                let r = client
                    .loan_slice_uninit(buf.len())
                    .map_err(|e| failed("loan a request", e))?;
                match r.write_from_slice(buf).send() {
                    Ok(p) => {
                        *pending = Some(p);
                        Ok(())
                    }
                    Err(e) => Err(self.sent("send a request", e)),
                }
            }
            Ports::Server { active, .. } => {
                let Some((req, _)) = active.take() else {
                    return Err(Error::Invalid(
                        "iceoryx2: a response with no request to answer".into(),
                    ));
                };
                let r = req
                    .loan_slice_uninit(buf.len())
                    .map_err(|e| failed("loan a response", e))?;
                if let Err(e) = r.write_from_slice(buf).send() {
                    return Err(self.sent("send a response", e));
                }
                Ok(())
            }
        }
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        let dead = &self.peer_dead;
        match &mut self.ports {
            Ports::PubSub {
                reading,
                subscriber,
                ..
            } => {
                if reading.is_none() {
                    let s = Self::poll(dead, "sample", || {
                        subscriber.receive().map_err(|e| failed("receive", e))
                    })?;
                    *reading = Some((s, 0));
                }
                hand_out_and_release(reading, |s| s.payload(), buf)
            }
            Ports::Client {
                reading, pending, ..
            } => {
                if reading.is_none() {
                    let Some(p) = pending.as_ref() else {
                        return Err(Error::Invalid(
                            "iceoryx2: a response read with no request sent".into(),
                        ));
                    };
                    let r = Self::poll(dead, "response", || {
                        p.receive().map_err(|e| failed("receive a response", e))
                    })?;
                    *pending = None;
                    *reading = Some((r, 0));
                }
                hand_out_and_release(reading, |r| r.payload(), buf)
            }
            Ports::Server { active, server } => {
                if active.is_none() {
                    let r = Self::poll(dead, "request", || {
                        server.receive().map_err(|e| failed("receive a request", e))
                    })?;
                    *active = Some((r, 0));
                }
                let Some((r, off)) = active.as_mut() else {
                    return Err(Error::Invalid("iceoryx2: no request is being read".into()));
                };
                let p = r.payload();
                if *off == p.len() {
                    return Err(Error::Invalid(
                        "iceoryx2: a second request read before the first was answered".into(),
                    ));
                }
                Ok(super::endpoint::hand_out(p, off, buf))
            }
        }
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

/// Wait (bounded) until `ready` holds: a message sent before the other side's
/// port is there is lost.
fn wait_for(ready: impl Fn() -> bool, timeout_ms: i32, dead: &AtomicBool) -> Result<()> {
    let t0 = std::time::Instant::now();
    while !ready() {
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
    Ok(())
}

fn open(place: Iox2Place, timeout_ms: i32, dead: Arc<AtomicBool>) -> Result<Iox2End> {
    let cfg = config(&place)?;
    let node = NodeBuilder::new()
        .config(&cfg)
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<ipc_threadsafe::Service>()
        .map_err(|e| failed("node", e))?;
    if place.request_response {
        return open_request_response(place, node, timeout_ms, dead);
    }
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
    // Both ways: the other side's subscriber and publisher.
    wait_for(
        || {
            out.dynamic_config().number_of_subscribers() > 0
                && inn.dynamic_config().number_of_publishers() > 0
        },
        timeout_ms,
        &dead,
    )?;
    publisher
        .update_connections()
        .map_err(|e| failed("connect", e))?;
    Ok(Iox2End {
        ports: Ports::PubSub {
            reading: None,
            next: None,
            publisher,
            subscriber,
        },
        _services: vec![Box::new(out), Box::new(inn)],
        _node: node,
        max: place.max,
        peer_dead: dead,
    })
}

/// One request-response service: the owner a client, the peer a server (one
/// request in flight, so none can be lost to an overflow).
fn open_request_response(
    place: Iox2Place,
    node: Node<ipc_threadsafe::Service>,
    timeout_ms: i32,
    dead: Arc<AtomicBool>,
) -> Result<Iox2End> {
    let name: ServiceName = format!("{}/rr", place.service)
        .as_str()
        .try_into()
        .map_err(|e| failed("service name", e))?;
    let service = node
        .service_builder(&name)
        .request_response::<[u8], [u8]>()
        .max_clients(1)
        .max_servers(1)
        .open_or_create()
        .map_err(|e| failed("service", e))?;
    let ports = if place.owner {
        let client = service
            .client_builder()
            .initial_max_slice_len(place.max)
            .create()
            .map_err(|e| failed("client", e))?;
        wait_for(
            || service.dynamic_config().number_of_servers() > 0,
            timeout_ms,
            &dead,
        )?;
        Ports::Client {
            reading: None,
            pending: None,
            client,
        }
    } else {
        let server = service
            .server_builder()
            .initial_max_slice_len(place.max)
            .create()
            .map_err(|e| failed("server", e))?;
        wait_for(
            || service.dynamic_config().number_of_clients() > 0,
            timeout_ms,
            &dead,
        )?;
        Ports::Server {
            active: None,
            server,
        }
    };
    Ok(Iox2End {
        ports,
        _services: vec![Box::new(service)],
        _node: node,
        max: place.max,
        peer_dead: dead,
    })
}

fn setup(opts: &MechOptions, block: usize, request_response: bool) -> Result<Link> {
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
        request_response,
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
        modes: TWO_SIDES,
        names: "iceoryx2's files under a private directory; ipcperf-<pid>-... in /dev/shm",
        in_dir: true,
        base: Some(MechanismKind::Shm),
        library: Some(LIBRARY),
        ..MechanismInfo::new(
            MechanismKind::Iceoryx2,
            "iceoryx2",
            "iceoryx2 publish-subscribe each way (loaned slices in shared memory; the \
                  subscriber busy-polls); round trips also by request-response \
                  (--request-response)",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        if opts.iox2_request_response {
            return Err(Error::Refused(
                "iceoryx2's request-response carries round trips; its streams are \
                 publish-subscribe (measured without --request-response)"
                    .into(),
            ));
        }
        setup(opts, block, false)
    }

    fn setup_round_trip(opts: &MechOptions, block: usize) -> Result<Link> {
        setup(opts, block, opts.iox2_request_response)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        if opts.iox2_request_response {
            out.push(("pattern".into(), "request-response".into()));
        }
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

#[cfg(test)]
mod tests;
