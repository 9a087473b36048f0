//! gRPC over a Unix socket (`grpc-uds`): tonic's generated client and server (a
//! service described in `build.rs`: a unary `Unary` and a bidirectional
//! streaming `Stream`, protobuf by prost) on one HTTP/2 connection of hyper's.
//! Round trips are unary calls; streams are messages on one streaming call. Each
//! write is one message, owned by tonic as its API asks (the block copied into
//! it); a read takes a message and hands it out piece by piece.
//!
//! Each end runs its own single-threaded tokio runtime on the caller's thread
//! (`block_on`): no thread of ours stands between the harness and the socket.
//! A write returns once what it sent is on the socket, as a socket write does:
//! the connection's I/O counts the bytes it wrote, and a write waits until at
//! least its message's frames went out (and, for an answer, its call's task has
//! ended, trailers handed over) with no write pending. So a last message is not
//! left in HTTP/2's buffer while its side waits elsewhere.
//! The owner asks (the client) and listens on the socket path; the peer answers
//! (the server) and connects: HTTP/2's roles do not depend on who connected.
//! Flow-control windows are HTTP/2's largest, so no message waits for a window
//! update; message size limits are off (tonic's default refuses past 4 MiB).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot, Notify};
use tonic::{Request, Response, Status, Streaming};

use super::endpoint::WAIT_MS;
use super::info::TWO_SIDES;
use super::{
    ByteStream, Link, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};
use ipcperf_sys::names::PrivateDir;

/// The service's messages and its generated client and server.
#[allow(clippy::all, missing_docs)]
mod proto {
    /// One message: a block of the payload.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Chunk {
        #[prost(bytes = "bytes", tag = "1")]
        pub data: ::bytes::Bytes,
    }
    include!(concat!(env!("OUT_DIR"), "/ipcperf.Echo.rs"));
}
use proto::echo_client::EchoClient;
use proto::echo_server::{Echo, EchoServer};
use proto::Chunk;

/// The crates and versions every result names.
pub const LIBRARY: &str = "tonic 0.14.9 (prost 0.14.6, hyper 1.12.0, h2 0.4.20)";
/// HTTP/2's largest flow-control window.
const WINDOW: u32 = (1 << 31) - 1;
/// HTTP/2's DATA frames are at most this long (the default we keep): how many
/// frame headers a message's bytes take at least.
const FRAME: u64 = 16_384;
/// The least a unary answer adds to its message's frames: the response's
/// HEADERS frame and the trailers' (9 bytes each, at least one of header block).
const ANSWER_FRAMES: u64 = 2 * 10;

mod conn;
use conn::{failed, on_wire, Conn, Counted, Exec, Outbox};

/// What the server's handler hands its end: a unary call's request and where
/// its answer goes, or a streaming call's incoming messages.
enum Call {
    Unary(Chunk, oneshot::Sender<Chunk>),
    Stream(Streaming<Chunk>),
}

/// The service: hands each call to the end, which answers it.
struct Handler {
    calls: mpsc::UnboundedSender<Call>,
    conn: Arc<Conn>,
}

type ServerOut = Outbox<std::result::Result<Chunk, Status>>;

#[tonic::async_trait]
impl Echo for Handler {
    async fn unary(&self, req: Request<Chunk>) -> std::result::Result<Response<Chunk>, Status> {
        let (tx, rx) = oneshot::channel();
        self.calls
            .send(Call::Unary(req.into_inner(), tx))
            .map_err(|_| Status::unavailable("the answering end is gone"))?;
        let answer = rx
            .await
            .map_err(|_| Status::cancelled("the answering end gave up"))?;
        Ok(Response::new(answer))
    }

    type StreamStream = ServerOut;

    async fn stream(
        &self,
        req: Request<Streaming<Chunk>>,
    ) -> std::result::Result<Response<ServerOut>, Status> {
        self.calls
            .send(Call::Stream(req.into_inner()))
            .map_err(|_| Status::unavailable("the answering end is gone"))?;
        // The response's headers go out in this same poll: a flush past this
        // mark carried them.
        self.conn.marked();
        Ok(Response::new(Outbox {
            conn: self.conn.clone(),
            wrap: Ok,
        }))
    }
}

/// hyper's HTTP/2 request sender as the tower service tonic's client drives.
#[derive(Clone)]
struct H2(hyper::client::conn::http2::SendRequest<tonic::body::Body>);

type H2Future = Pin<
    Box<
        dyn std::future::Future<
                Output = std::result::Result<http::Response<hyper::body::Incoming>, hyper::Error>,
            > + Send,
    >,
>;

impl tower_service::Service<http::Request<tonic::body::Body>> for H2 {
    type Response = http::Response<hyper::body::Incoming>;
    type Error = hyper::Error;
    type Future = H2Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), hyper::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> H2Future {
        Box::pin(self.0.send_request(req))
    }
}

use tonic::codegen::http;

/// What an end does with a write and a read.
enum Role {
    /// Asks unary calls: a write is a call, its answer kept for the reads.
    Asker(EchoClient<H2>),
    /// Answers unary calls: a read takes the next request, a write answers it.
    Answerer {
        calls: mpsc::UnboundedReceiver<Call>,
        answer: Option<oneshot::Sender<Chunk>>,
    },
    /// One streaming call: writes go out through the outbox, reads come in.
    /// The asker keeps its client: hyper ends a connection whose last request
    /// sender is gone, streams in flight or not.
    Stream {
        inbound: Streaming<Chunk>,
        _client: Option<Box<EchoClient<H2>>>,
    },
}

/// One side: its role, the message being read, its connection and runtime.
pub struct GrpcEnd {
    role: Role,
    msg: Bytes,
    /// How much of `msg` has been handed out.
    off: usize,
    conn: Arc<Conn>,
    /// Last: the runtime outlives every task and object of its.
    rt: tokio::runtime::Runtime,
}

impl std::fmt::Debug for GrpcEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let role = match self.role {
            Role::Asker(_) => "asker",
            Role::Answerer { .. } => "answerer",
            Role::Stream { .. } => "stream",
        };
        write!(f, "GrpcEnd({role})")
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| failed("runtime", e))
}

/// `fut` on `rt`, bounded.
fn bounded<F: std::future::Future>(
    rt: &tokio::runtime::Runtime,
    ms: i32,
    what: &str,
    fut: F,
) -> Result<F::Output> {
    let limit = Duration::from_millis(ms.max(0) as u64);
    rt.block_on(async { tokio::time::timeout(limit, fut).await })
        .map_err(|_| Error::Timeout(format!("grpc-uds: {what} not done within {ms} ms")))
}

/// [`bounded`], and ended as soon as the other side is gone where the owner's
/// open watches it ([`super::other_side`]): its state is looked at every slice.
fn bounded_watched<F: std::future::Future>(
    rt: &tokio::runtime::Runtime,
    ms: i32,
    what: &str,
    fut: F,
) -> Result<F::Output> {
    use std::task::Poll;
    let Some(alive) = super::other_side::watched() else {
        return bounded(rt, ms, what, fut);
    };
    let slice = Duration::from_millis(super::other_side::SLICE_MS as u64);
    let raced = bounded(rt, ms, what, async move {
        let mut fut = std::pin::pin!(fut);
        let mut tick = tokio::time::interval(slice);
        std::future::poll_fn(|cx| {
            if let Poll::Ready(v) = fut.as_mut().poll(cx) {
                return Poll::Ready(Some(v));
            }
            while tick.poll_tick(cx).is_ready() {
                if !alive() {
                    return Poll::Ready(None);
                }
            }
            Poll::Pending
        })
        .await
    })?;
    raced.ok_or_else(|| Error::Peer(format!("grpc-uds: the other side ended while {what}")))
}

fn status(op: &str, s: Status) -> Error {
    match s.code() {
        tonic::Code::Unavailable | tonic::Code::Cancelled | tonic::Code::Unknown => Error::Peer(
            format!("grpc-uds: {op}: the other side is gone ({})", s.message()),
        ),
        _ => failed(op, s),
    }
}

impl GrpcEnd {
    /// Drive the runtime until `done` holds (bounded), or the connection ends.
    fn drive(&self, what: &str, done: impl Fn(&Conn) -> bool) -> Result<()> {
        let conn = &self.conn;
        let held = bounded(&self.rt, WAIT_MS, what, async {
            loop {
                if done(conn) {
                    return true;
                }
                if conn.closed.load(Ordering::Relaxed) {
                    return false;
                }
                conn.changed.notified().await;
            }
        })?;
        if held {
            Ok(())
        } else {
            Err(Error::Peer(format!(
                "grpc-uds: the other side closed the connection ({what} not sent)"
            )))
        }
    }
}

impl ByteStream for GrpcEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        let chunk = Chunk {
            data: Bytes::copy_from_slice(buf),
        };
        let (from, bytes) = (self.conn.written.load(Ordering::Relaxed), on_wire(&chunk));
        match &mut self.role {
            Role::Asker(client) => {
                let r = bounded(&self.rt, WAIT_MS, "a unary call", client.unary(chunk))?;
                self.msg = r.map_err(|s| status("unary call", s))?.into_inner().data;
                self.off = 0;
                Ok(())
            }
            Role::Answerer { answer, .. } => {
                let to = answer
                    .take()
                    .ok_or_else(|| failed("answer", "no call to answer"))?;
                to.send(chunk)
                    .map_err(|_| failed("answer", "the call was cancelled"))?;
                // Sent once the call's task has ended (all its frames handed to
                // HTTP/2) and at least those frames went out.
                self.drive("an answer", |c| {
                    c.running.load(Ordering::Relaxed) == 0 && c.sent(from, bytes + ANSWER_FRAMES)
                })
            }
            Role::Stream { .. } => {
                *self.conn.out.lock().unwrap_or_else(|e| e.into_inner()) = Some(chunk);
                if let Some(w) = self
                    .conn
                    .out_waker
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                {
                    w.wake();
                }
                self.drive("a streamed message", |c| {
                    c.out.lock().map(|o| o.is_none()).unwrap_or(false) && c.sent(from, bytes)
                })
            }
        }
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.off >= self.msg.len() {
            self.msg = match &mut self.role {
                Role::Asker(_) => return Err(failed("read", "no answer was asked for")),
                Role::Answerer { calls, answer } => {
                    match bounded(&self.rt, WAIT_MS, "a call", calls.recv())? {
                        Some(Call::Unary(req, to)) => {
                            *answer = Some(to);
                            req.data
                        }
                        Some(Call::Stream(_)) => {
                            return Err(failed("read", "a streaming call where unary was set up"))
                        }
                        None => {
                            return Err(Error::Peer(
                                "grpc-uds: the other side closed the connection".into(),
                            ))
                        }
                    }
                }
                Role::Stream { inbound, .. } => {
                    match bounded(&self.rt, WAIT_MS, "a streamed message", inbound.message())? {
                        Ok(Some(c)) => c.data,
                        Ok(None) => {
                            return Err(Error::Peer(
                                "grpc-uds: the other side ended the stream".into(),
                            ))
                        }
                        Err(s) => return Err(status("stream", s)),
                    }
                }
            };
            self.off = 0;
        }
        Ok(super::endpoint::hand_out(&self.msg, &mut self.off, buf))
    }
}

/// The owner's side before the peer connects.
struct Waiting {
    listener: std::os::unix::net::UnixListener,
    unary: bool,
}

impl Waiting {
    /// Accept the peer (bounded) and become the asking end: the client.
    fn meet(self, timeout_ms: i32) -> Result<GrpcEnd> {
        let rt = runtime()?;
        let conn = Arc::new(Conn::default());
        self.listener
            .set_nonblocking(true)
            .map_err(|e| failed("listener", e))?;
        let listener = {
            let _g = rt.enter();
            tokio::net::UnixListener::from_std(self.listener).map_err(|e| failed("listener", e))?
        };
        let (sock, _) = bounded_watched(&rt, timeout_ms, "accepting the peer", listener.accept())?
            .map_err(|e| failed("accept", e))?;
        drop(listener);
        let io = Counted {
            io: hyper_util::rt::TokioIo::new(sock),
            conn: conn.clone(),
        };
        let (send, connection) = bounded(
            &rt,
            timeout_ms,
            "the HTTP/2 handshake",
            hyper::client::conn::http2::Builder::new(Exec(conn.clone()))
                .initial_stream_window_size(WINDOW)
                .initial_connection_window_size(WINDOW)
                .handshake::<_, tonic::body::Body>(io),
        )?
        .map_err(|e| failed("handshake", e))?;
        let c = conn.clone();
        rt.spawn(async move {
            let _ = connection.await;
            c.close();
        });
        let mut client =
            EchoClient::with_origin(H2(send), http::Uri::from_static("http://ipcperf"))
                .max_decoding_message_size(usize::MAX)
                .max_encoding_message_size(usize::MAX);
        let role = if self.unary {
            Role::Asker(client)
        } else {
            let out = Outbox {
                conn: conn.clone(),
                wrap: std::convert::identity,
            };
            let r = bounded(&rt, timeout_ms, "opening the stream", client.stream(out))?;
            Role::Stream {
                inbound: r.map_err(|s| status("stream", s))?.into_inner(),
                _client: Some(Box::new(client)),
            }
        };
        Ok(GrpcEnd {
            role,
            msg: Bytes::new(),
            off: 0,
            conn,
            rt,
        })
    }
}

fn setup(opts: &MechOptions, unary: bool) -> Result<Link> {
    let dir = PrivateDir::create(&opts.base_dir(), "grpc")?;
    let path = dir.join("grpc.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).map_err(|e| failed("bind", e))?;
    let mut link = super::in_process::link(
        MechanismKind::GrpcUds,
        opts,
        Waiting { listener, unary },
        PeerAddr::Grpc { path, unary },
        Some(dir),
    );
    link.facts.push((
        "grpc_call".into(),
        if unary {
            "unary"
        } else {
            "bidirectional stream"
        }
        .into(),
    ));
    // What bounds a message on this connection, as both ends set it.
    link.facts.push((
        "http2_windows".into(),
        format!("{WINDOW} B per stream and per connection, both ends"),
    ));
    link.facts
        .push(("grpc_message_limits".into(), "none (usize::MAX)".into()));
    Ok(link)
}

/// The answering end: connect to the owner's path and serve the connection.
fn answer(path: &std::path::Path, unary: bool, timeout_ms: i32) -> Result<GrpcEnd> {
    let rt = runtime()?;
    let conn = Arc::new(Conn::default());
    let sock = std::os::unix::net::UnixStream::connect(path)
        .map_err(|e| failed(&format!("connect {}", path.display()), e))?;
    sock.set_nonblocking(true)
        .map_err(|e| failed("socket", e))?;
    let sock = {
        let _g = rt.enter();
        tokio::net::UnixStream::from_std(sock).map_err(|e| failed("socket", e))?
    };
    let (tx, mut calls) = mpsc::unbounded_channel();
    let service = EchoServer::new(Handler {
        calls: tx,
        conn: conn.clone(),
    })
    .max_decoding_message_size(usize::MAX)
    .max_encoding_message_size(usize::MAX);
    let io = Counted {
        io: hyper_util::rt::TokioIo::new(sock),
        conn: conn.clone(),
    };
    let serving = hyper::server::conn::http2::Builder::new(Exec(conn.clone()))
        .initial_stream_window_size(WINDOW)
        .initial_connection_window_size(WINDOW)
        .serve_connection(io, hyper_util::service::TowerToHyperService::new(service));
    let c = conn.clone();
    rt.spawn(async move {
        let _ = serving.await;
        c.close();
    });
    let role = if unary {
        Role::Answerer {
            calls,
            answer: None,
        }
    } else {
        let inbound = match bounded(&rt, timeout_ms, "the streaming call", calls.recv())? {
            Some(Call::Stream(s)) => s,
            _ => return Err(failed("open", "no streaming call came")),
        };
        Role::Stream {
            inbound,
            _client: None,
        }
    };
    let end = GrpcEnd {
        role,
        msg: Bytes::new(),
        off: 0,
        conn,
        rt,
    };
    if !unary {
        // The response's headers, which the asker waits for, are out.
        end.drive("the stream's headers", Conn::flushed)?;
    }
    Ok(end)
}

fn open(h: PeerHandoff, timeout_ms: i32) -> Result<GrpcEnd> {
    match h.addr {
        PeerAddr::InProcess { id } => super::in_process::take::<Waiting>(id)
            .ok_or_else(|| failed("open", "the owner's end is not here"))?
            .meet(timeout_ms),
        PeerAddr::Grpc { path, unary } => answer(&path, unary, timeout_ms),
        other => Err(failed("open", format!("cannot open {other:?}"))),
    }
}

/// gRPC over a Unix socket: tonic's client and server.
pub struct GrpcUds;

impl Mechanism for GrpcUds {
    type End = GrpcEnd;
    const POLLS: bool = false;

    const INFO: MechanismInfo = MechanismInfo {
        modes: TWO_SIDES,
        names: "socket path",
        in_dir: true,
        base: Some(MechanismKind::Unix),
        library: Some(LIBRARY),
        ..MechanismInfo::new(
            MechanismKind::GrpcUds,
            "grpc-uds",
            "gRPC (tonic, HTTP/2) over a Unix socket path: unary calls for round trips, \
                  a bidirectional streaming call for streams",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup(opts, false)
    }

    fn setup_round_trip(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup(opts, true)
    }

    fn open(h: PeerHandoff, timeout_ms: i32) -> Result<GrpcEnd> {
        open(h, timeout_ms)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn wait_label(_opts: &MechOptions) -> String {
        "block".into()
    }
}

#[cfg(test)]
mod tests;
