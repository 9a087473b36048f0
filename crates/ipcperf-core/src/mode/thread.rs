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
    tid: Option<i64>,
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
        let (tid_tx, tid_rx) = channel();
        let join = std::thread::Builder::new()
            .name("ipcperf-peer".into())
            .spawn(move || {
                let _flag = flag;
                let _ = tid_tx.send(i64::from(nix::unistd::gettid().as_raw()));
                let mut ch = ThreadChannel {
                    tx: from_tx,
                    rx: to_rx,
                };
                job(&mut ch, setup)
            })
            .map_err(|e| Error::Peer(format!("cannot start the peer thread: {e}")))?;
        // Its first act: the wait is for a thread to be scheduled once.
        let tid = tid_rx.recv_timeout(Duration::from_secs(2)).ok();
        Ok(ThreadPeer {
            tx: to_tx,
            rx: from_rx,
            join: Some(join),
            done,
            tid,
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
        let mut mark = ipcperf_sys::signal::continues();
        loop {
            match self
                .rx
                .recv_timeout(Duration::from_millis(timeout_ms.max(0) as u64))
            {
                Ok(m) => return Ok(m),
                // A stop (Ctrl-Z) ran the wait out: wait again from the continue.
                Err(RecvTimeoutError::Timeout) if ipcperf_sys::signal::continued_since(mark) => {
                    mark = ipcperf_sys::signal::continues();
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Error::Timeout(format!(
                        "the peer thread did not answer within {timeout_ms} ms"
                    )))
                }
                Err(RecvTimeoutError::Disconnected) => return Err(self.join_error()),
            }
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
    fn thread_id(&self) -> Option<i64> {
        self.tid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::{MechanismKind, PeerAddr, PeerHandoff};
    use crate::mode::protocol::PeerRole;

    /// The peer says its own thread id, as the tracer would see it.
    fn say_tid(ch: &mut dyn PeerChannel, _setup: PeerSetup) -> Result<()> {
        let tid = nix::unistd::gettid().as_raw();
        ch.send(FromPeer::Failed {
            message: tid.to_string(),
        })
    }

    /// What `--explain` follows as the other side of a threads-mode case is the
    /// peer thread itself, not the starter nor any other thread of the process.
    #[test]
    fn the_peer_threads_id_is_its_own() {
        let end = PeerHandoff {
            kind: MechanismKind::Pipe,
            addr: PeerAddr::Fd,
            opts: Default::default(),
            fds: Vec::new(),
        };
        let setup = PeerSetup::bare(PeerRole::StreamReader, end);
        let mut peer = ThreadPeer::spawn_job(setup, say_tid).unwrap();
        let said = match peer.recv(2000).unwrap() {
            FromPeer::Failed { message } => message.parse::<i64>().unwrap(),
            other => panic!("{other:?}"),
        };
        let me = i64::from(nix::unistd::gettid().as_raw());
        assert_eq!(peer.thread_id(), Some(said));
        assert_ne!(said, me);
    }
}
