//! ipc-channel (servo's crate): typed channels over Unix SOCK_SEQPACKET sockets,
//! a channel's ends passed between processes inside messages. Bytes go as
//! `IpcSender<ByteBuf>` (serde_bytes: the buffer serialized whole, not byte by
//! byte), each write one message that the sender hands over owned, as the
//! crate's API asks; a read takes a message and hands it out piece by piece.
//!
//! The two processes meet the crate's way: the owner opens an
//! `IpcOneShotServer` (a socket in a temp directory of the crate's own, gone once
//! accepted), the peer connects to it and sends a channel over which it gets its
//! ends. Every receive is bounded (`try_recv_timeout`), and so is the accept.
//! The accept runs on a thread of its own from set-up on, so the peer's end can
//! open on the owner's own thread: single mode is the crate's own benchmark
//! (one thread sends a message and receives it), up to the largest block the
//! crate sends unfragmented (a fragmented one waits for a reader while sent).

use std::sync::mpsc;
use std::time::Duration;

use ipc_channel::ipc::{self, IpcOneShotServer, IpcReceiver, IpcSender};
use ipc_channel::{IpcError, TryRecvError};
use serde_bytes::ByteBuf;

use super::endpoint::WAIT_MS;
use super::{
    ByteStream, Link, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
use crate::error::{Error, Result};

/// What the peer's ends travel in: its receiver and its sender.
type PeerEnds = (IpcReceiver<ByteBuf>, IpcSender<ByteBuf>);
/// What the peer sends the one-shot server: where to send its ends.
type Hello = IpcSender<PeerEnds>;

/// The crate and version every result names.
pub const LIBRARY: &str = "ipc-channel 0.23.1";

/// One side: its sender, its receiver, the message being read.
pub struct ChannelEnd {
    tx: IpcSender<ByteBuf>,
    rx: IpcReceiver<ByteBuf>,
    msg: Vec<u8>,
    off: usize,
}

impl std::fmt::Debug for ChannelEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChannelEnd")
    }
}

fn failed(op: &str, e: impl std::fmt::Display) -> Error {
    Error::Peer(format!("ipc-channel: {op}: {e}"))
}

fn recv_bounded<T>(rx: &IpcReceiver<T>, what: &str) -> Result<T>
where
    T: for<'de> serde::Deserialize<'de> + serde::Serialize,
{
    let mut mark = ipcperf_sys::signal::continues_mark();
    loop {
        match rx.try_recv_timeout(Duration::from_millis(WAIT_MS as u64)) {
            Ok(v) => return Ok(v),
            // Its wait is a poll, which a stop (Ctrl-Z, `fg`) interrupts
            // whatever SA_RESTART says; nothing was taken from the socket.
            Err(TryRecvError::IpcError(IpcError::Io(e)))
                if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(TryRecvError::Empty) if ipcperf_sys::signal::continued_since(mark) => {
                mark = ipcperf_sys::signal::continues();
            }
            Err(TryRecvError::Empty) => {
                return Err(Error::Timeout(format!(
                    "ipc-channel: no {what} within {WAIT_MS} ms"
                )))
            }
            Err(TryRecvError::IpcError(IpcError::Disconnected)) => {
                return Err(Error::Peer(format!(
                    "ipc-channel: the other side closed its channel (no {what})"
                )))
            }
            Err(TryRecvError::IpcError(e)) => return Err(failed("receive", e.to_string())),
        }
    }
}

impl ByteStream for ChannelEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        self.tx
            .send(ByteBuf::from(buf))
            .map_err(|e| failed("send", e.to_string()))
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.off >= self.msg.len() {
            self.msg = recv_bounded(&self.rx, "message")?.into_vec();
            self.off = 0;
        }
        Ok(super::endpoint::hand_out(&self.msg, &mut self.off, buf))
    }
}

/// The owner's side before the peer arrives: its own ends, and the thread that
/// accepts the peer on the one-shot server and sends it its ends.
struct Waiting {
    name: String,
    ours: Option<(IpcSender<ByteBuf>, IpcReceiver<ByteBuf>)>,
    done: mpsc::Receiver<Result<()>>,
    accepting: Option<std::thread::JoinHandle<()>>,
}

impl Waiting {
    /// Wait (bounded) until the peer has been accepted and given its ends, and
    /// become the owner's end.
    fn meet(mut self, timeout_ms: i32) -> Result<ChannelEnd> {
        let done = &self.done;
        let met = super::other_side::wait_for(timeout_ms, "it connected", |ms| {
            match done.recv_timeout(Duration::from_millis(ms.max(0) as u64)) {
                Ok(r) => Ok(Some(r)),
                Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    Err(failed("accept", "the accepting thread ended"))
                }
            }
        })?;
        match met {
            Some(r) => {
                if let Some(t) = self.accepting.take() {
                    let _ = t.join();
                }
                r?;
                let (tx, rx) = self
                    .ours
                    .take()
                    .ok_or_else(|| Error::Peer("ipc-channel: the owner's end was taken".into()))?;
                Ok(ChannelEnd {
                    tx,
                    rx,
                    msg: Vec::new(),
                    off: 0,
                })
            }
            None => Err(Error::Timeout(format!(
                "ipc-channel: no peer connected within {timeout_ms} ms"
            ))),
        }
    }
}

impl Drop for Waiting {
    /// The crate's accept has no bound: a peer that never came is stood in for
    /// by a hello of ours, which frees the accepting thread (and the server's
    /// socket and directory go with it). Joined only once freed: a hello that
    /// could not be sent leaves the thread to end with the process, not us waiting.
    fn drop(&mut self) {
        let Some(t) = self.accepting.take() else {
            return;
        };
        if !t.is_finished() {
            if let Ok(s) = IpcSender::<Hello>::connect(self.name.clone()) {
                if let Ok((tx, _rx)) = ipc::channel::<PeerEnds>() {
                    let _ = s.send(tx);
                }
            }
            if self.done.recv_timeout(Duration::from_secs(1)).is_err() {
                return;
            }
        }
        let _ = t.join();
    }
}

/// The largest block one thread can send and then receive itself: a message
/// the crate must split into fragments waits for a reader while it is sent.
fn single_max_block() -> usize {
    // The serialized message adds its length and the crate's header.
    ipc_channel::platform::OsIpcSender::get_max_fragment_size().saturating_sub(64)
}

fn setup(opts: &MechOptions) -> Result<Link> {
    let (to_peer, peer_rx) = ipc::channel::<ByteBuf>().map_err(|e| failed("channel", e))?;
    let (peer_tx, from_peer) = ipc::channel::<ByteBuf>().map_err(|e| failed("channel", e))?;
    let (server, name) = IpcOneShotServer::<Hello>::new().map_err(|e| failed("server", e))?;
    // Accepting starts now, on a thread of its own, so that a peer opened on
    // this very thread (single mode) gets its ends without the owner's turn.
    let theirs: PeerEnds = (peer_rx, peer_tx);
    let (done_tx, done) = mpsc::channel();
    let accepting = std::thread::Builder::new()
        .name("ipc-channel accept".into())
        .spawn(move || {
            let r = match server.accept() {
                Ok((_hello_rx, to_peer)) => to_peer
                    .send(theirs)
                    .map_err(|e| failed("send the peer its ends", e.to_string())),
                Err(e) => Err(failed("accept", e.to_string())),
            };
            let _ = done_tx.send(r);
        })
        .map_err(|e| failed("spawn", e))?;
    let waiting = Waiting {
        name: name.clone(),
        ours: Some((to_peer, from_peer)),
        done,
        accepting: Some(accepting),
    };
    Ok(super::in_process::link(
        MechanismKind::IpcChannel,
        opts,
        waiting,
        PeerAddr::IpcChannel { server: name },
        None,
    ))
}

fn open(h: PeerHandoff, timeout_ms: i32) -> Result<ChannelEnd> {
    match h.addr {
        PeerAddr::InProcess { id } => super::in_process::take::<Waiting>(id)
            .ok_or_else(|| Error::Peer("ipc-channel: the owner's end is not here".into()))?
            .meet(timeout_ms),
        PeerAddr::IpcChannel { server } => {
            let hello = IpcSender::<Hello>::connect(server.clone())
                .map_err(|e| failed(&format!("connect {server}"), e))?;
            let (tx, rx) = ipc::channel::<PeerEnds>().map_err(|e| failed("channel", e))?;
            hello
                .send(tx)
                .map_err(|e| failed("hello", format!("{e:?}")))?;
            let (rx, tx) = recv_bounded(&rx, "ends from the owner")?;
            Ok(ChannelEnd {
                tx,
                rx,
                msg: Vec::new(),
                off: 0,
            })
        }
        other => Err(Error::Peer(format!("ipc-channel cannot open {other:?}"))),
    }
}

/// servo's ipc-channel.
pub struct IpcChannel;

impl Mechanism for IpcChannel {
    type End = ChannelEnd;
    const POLLS: bool = false;

    const INFO: MechanismInfo = MechanismInfo {
        names: "the crate's one-shot server socket (its temp directory, until accepted)",
        base: Some(MechanismKind::UnixSeqpacket),
        library: Some(LIBRARY),
        ..MechanismInfo::new(
            MechanismKind::IpcChannel,
            "ipc-channel",
            "servo's ipc-channel: IpcSender<ByteBuf> each way, over Unix seqpacket sockets",
        )
    };

    fn setup(opts: &MechOptions, _block: usize) -> Result<Link> {
        setup(opts)
    }

    fn open(h: PeerHandoff, timeout_ms: i32) -> Result<ChannelEnd> {
        open(h, timeout_ms)
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn single_block_fits(block: usize) -> Result<()> {
        let max = single_max_block();
        if block > max {
            return Err(Error::Refused(format!(
                "ipc-channel sends a {block}-byte message in fragments, and one thread cannot \
                 receive what it is still sending: single mode takes blocks up to {max} bytes \
                 (threads and processes take any)"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate's accept has no bound of its own: a peer that never connects is
    /// a timeout, and the thread that waited is freed, not left behind.
    #[test]
    fn an_owner_whose_peer_never_comes_times_out() {
        let mut link = setup(&MechOptions::default()).unwrap();
        let _peer = link.take_peer().unwrap();
        let t0 = std::time::Instant::now();
        let r = super::super::open_local::<IpcChannel>(&mut link, 200);
        assert!(matches!(r, Err(Error::Timeout(_))), "{r:?}");
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    }

    /// Single mode, as the crate's own benchmark: one thread opens both ends,
    /// sends the largest unfragmented block and receives every byte of it; one
    /// byte more is refused before anything opens.
    #[test]
    fn one_thread_sends_itself_the_largest_unfragmented_block() {
        let max = single_max_block();
        assert!(max > 64 * 1024, "{max}");
        assert!(IpcChannel::single_block_fits(max).is_ok());
        assert!(matches!(
            IpcChannel::single_block_fits(max + 1),
            Err(Error::Refused(_))
        ));
        let mut link = setup(&MechOptions::default()).unwrap();
        let mut theirs = IpcChannel::open(link.take_peer().unwrap(), 2000).unwrap();
        let mut ours = super::super::open_local::<IpcChannel>(&mut link, 2000).unwrap();
        let block: Vec<u8> = (0..max).map(|i| (i % 251) as u8).collect();
        let echo = |tx: &mut ChannelEnd, rx: &mut ChannelEnd| {
            tx.write_all(&block).unwrap();
            let mut got = vec![0u8; max];
            let mut n = 0;
            while n < max {
                n += rx.read_some(&mut got[n..]).unwrap();
            }
            assert!(got == block);
        };
        echo(&mut ours, &mut theirs);
        echo(&mut theirs, &mut ours);
    }

    /// A link dropped before its owner opened frees the thread that accepts:
    /// the one-shot server's socket (in the crate's own temp directory) goes.
    #[test]
    fn a_link_never_opened_leaves_no_server_socket() {
        let mut link = setup(&MechOptions::default()).unwrap();
        let PeerAddr::IpcChannel { server } = link.take_peer().unwrap().addr else {
            panic!("not an ipc-channel address");
        };
        assert!(std::path::Path::new(&server).exists(), "{server}");
        let t0 = std::time::Instant::now();
        drop(link);
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        assert!(!std::path::Path::new(&server).exists(), "{server} is left");
    }

    /// A reader whose writer has gone is told so at once, not after the bound.
    #[test]
    fn a_gone_writer_is_an_error_at_once() {
        let mut link = setup(&MechOptions::default()).unwrap();
        let peer = link.take_peer().unwrap();
        let t = std::thread::spawn(move || IpcChannel::open(peer, 2000));
        let mut ours = super::super::open_local::<IpcChannel>(&mut link, 2000).unwrap();
        let mut theirs = t.join().unwrap().unwrap();
        ours.write_all(b"hello").unwrap();
        let mut buf = [0u8; 3];
        assert_eq!(theirs.read_some(&mut buf).unwrap(), 3);
        assert_eq!(theirs.read_some(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"lo");
        drop(ours);
        let t0 = std::time::Instant::now();
        assert!(matches!(theirs.read_some(&mut buf), Err(Error::Peer(_))));
        assert!(t0.elapsed() < Duration::from_secs(1));
    }
}
