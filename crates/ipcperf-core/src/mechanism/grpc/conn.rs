//! The connection under tonic: the Unix socket counting what it wrote and
//! flushed, the executor counting HTTP/2's tasks, and the outbox a streaming
//! call's messages leave by; what the ends wait on to know a message went out.

use super::*;

/// The fewest bytes a message of `chunk` takes on the connection: gRPC's 5-byte
/// prefix, the protobuf encoding, a 9-byte header per DATA frame.
pub(super) fn on_wire(chunk: &Chunk) -> u64 {
    let grpc = 5 + prost::Message::encoded_len(chunk) as u64;
    grpc + 9 * grpc.div_ceil(FRAME)
}

pub(super) fn failed(op: &str, e: impl std::fmt::Display) -> Error {
    Error::Peer(format!("grpc-uds: {op}: {e}"))
}

/// What one side's connection shares between its tasks and its end.
#[derive(Default)]
pub(super) struct Conn {
    /// Bytes written to the socket.
    pub(super) written: AtomicU64,
    /// The last write to the socket found it full (and waits for room).
    pub(super) write_pending: AtomicBool,
    /// Flushes of the socket that completed.
    pub(super) flushes: AtomicU64,
    /// `flushes` when the latest outgoing data reached HTTP/2: a flush past it
    /// carried that data.
    pub(super) mark: AtomicU64,
    /// Tasks HTTP/2 spawned (a call's stream each) that are still running.
    pub(super) running: AtomicU64,
    /// The message waiting for the outgoing stream to take it.
    pub(super) out: Mutex<Option<Chunk>>,
    pub(super) out_waker: Mutex<Option<Waker>>,
    /// The connection has ended (the other side closed it or died).
    pub(super) closed: AtomicBool,
    /// Wakes the end's waits on any of the above.
    pub(super) changed: Notify,
}

impl Conn {
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
        self.changed.notify_one();
    }

    pub(super) fn marked(&self) {
        self.mark
            .store(self.flushes.load(Ordering::Relaxed), Ordering::Relaxed);
        self.changed.notify_one();
    }

    /// Whether a flush came after the latest outgoing data (a small frame's:
    /// a large message's frames see flushes between them).
    pub(super) fn flushed(&self) -> bool {
        self.flushes.load(Ordering::Relaxed) > self.mark.load(Ordering::Relaxed)
    }

    /// Whether `bytes` went out since `written` was `from`, nothing waiting.
    pub(super) fn sent(&self, from: u64, bytes: u64) -> bool {
        self.written.load(Ordering::Relaxed) - from >= bytes
            && !self.write_pending.load(Ordering::Relaxed)
    }

    pub(super) fn wrote(&self, r: &Poll<std::io::Result<usize>>) {
        match r {
            Poll::Ready(Ok(n)) => {
                self.written.fetch_add(*n as u64, Ordering::Relaxed);
                self.write_pending.store(false, Ordering::Relaxed);
                self.changed.notify_one();
            }
            Poll::Pending => self.write_pending.store(true, Ordering::Relaxed),
            Poll::Ready(Err(_)) => {}
        }
    }
}

/// The socket, counting completed flushes.
pub(super) struct Counted {
    pub(super) io: hyper_util::rt::TokioIo<tokio::net::UnixStream>,
    pub(super) conn: Arc<Conn>,
}

impl hyper::rt::Read for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write(cx, buf);
        self.conn.wrote(&r);
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.io).poll_flush(cx);
        if let Poll::Ready(Ok(())) = r {
            self.conn.flushes.fetch_add(1, Ordering::Relaxed);
            self.conn.changed.notify_one();
        }
        r
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.conn.wrote(&r);
        r
    }
}

/// HTTP/2's executor: tokio's, counting the tasks it runs to their end (a call
/// has ended, its last frame handed over, when its task has).
#[derive(Clone)]
pub(super) struct Exec(pub(super) Arc<Conn>);

impl<F> hyper::rt::Executor<F> for Exec
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, fut: F) {
        let conn = self.0.clone();
        conn.running.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            fut.await;
            conn.running.fetch_sub(1, Ordering::Relaxed);
            conn.marked();
        });
    }
}

/// The outgoing side of a streaming call: yields the message a write leaves.
pub(super) struct Outbox<T> {
    pub(super) conn: Arc<Conn>,
    pub(super) wrap: fn(Chunk) -> T,
}

impl<T> futures_core::Stream for Outbox<T> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let taken = self
            .conn
            .out
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match taken {
            Some(c) => {
                self.conn.marked();
                Poll::Ready(Some((self.wrap)(c)))
            }
            None => {
                *self
                    .conn
                    .out_waker
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
