//! A peer in a thread of this process, talking over channels.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::protocol::{FromPeer, Job, PeerChannel, PeerHandle, PeerSetup, ToPeer};
use crate::error::{Error, Result};

struct ThreadChannel {
    tx: Sender<FromPeer>,
    rx: Receiver<ToPeer>,
}

impl PeerChannel for ThreadChannel {
    fn send(&mut self, m: FromPeer) -> Result<()> {
        self.tx
            .send(m)
            .map_err(|_| Error::Peer("the owner thread is gone".into()))
    }
    fn recv(&mut self) -> Result<ToPeer> {
        self.rx
            .recv()
            .map_err(|_| Error::Peer("the owner thread is gone".into()))
    }
}

pub struct ThreadPeer {
    tx: Sender<ToPeer>,
    rx: Receiver<FromPeer>,
    join: Option<JoinHandle<Result<()>>>,
    done: Arc<AtomicBool>,
}

/// Sets the flag when the peer thread ends, by return or by panic.
struct DoneOnDrop(Arc<AtomicBool>);
impl Drop for DoneOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

impl ThreadPeer {
    /// A peer thread doing `job`.
    pub fn spawn_job(setup: PeerSetup, job: Job) -> Result<ThreadPeer> {
        let (to_tx, to_rx) = channel();
        let (from_tx, from_rx) = channel();
        let done = Arc::new(AtomicBool::new(false));
        let flag = DoneOnDrop(done.clone());
        let join = std::thread::Builder::new()
            .name("ipcperf-peer".into())
            .spawn(move || {
                let _flag = flag;
                let mut ch = ThreadChannel {
                    tx: from_tx,
                    rx: to_rx,
                };
                job(&mut ch, setup)
            })
            .map_err(|e| Error::Peer(format!("cannot start the peer thread: {e}")))?;
        Ok(ThreadPeer {
            tx: to_tx,
            rx: from_rx,
            join: Some(join),
            done,
        })
    }

    /// True once the peer thread has ended (for a watchdog in another thread).
    pub fn done_flag(&self) -> Arc<AtomicBool> {
        self.done.clone()
    }

    fn join_error(&mut self) -> Error {
        match self.join.take().map(|j| j.join()) {
            Some(Ok(Err(e))) => e,
            Some(Err(_)) => Error::Peer("the peer thread panicked".into()),
            _ => Error::Peer("the peer thread ended early".into()),
        }
    }
}

impl PeerHandle for ThreadPeer {
    fn send(&mut self, m: ToPeer) -> Result<()> {
        if self.tx.send(m).is_err() {
            return Err(self.join_error());
        }
        Ok(())
    }

    fn recv(&mut self, timeout_ms: i32) -> Result<FromPeer> {
        match self
            .rx
            .recv_timeout(Duration::from_millis(timeout_ms.max(0) as u64))
        {
            Ok(m) => Ok(m),
            Err(RecvTimeoutError::Timeout) => Err(Error::Timeout(format!(
                "the peer thread did not answer within {timeout_ms} ms"
            ))),
            Err(RecvTimeoutError::Disconnected) => Err(self.join_error()),
        }
    }

    fn finish(&mut self) -> Result<()> {
        let _ = self.tx.send(ToPeer::Quit);
        match self.join.take().map(|j| j.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::Peer("the peer thread panicked".into())),
            None => Ok(()),
        }
    }
}
