//! Message queues: System V (msgget/msgsnd/msgrcv) and POSIX (mq_open/mq_send/
//! mq_receive). A message is one block; a block larger than this system allows
//! is refused before the run, naming the limit and the sysctl that raises it.
//!
//! SysV: one queue carries both directions, type 1 owner→peer and type 2
//! peer→owner; the peer finds it by id. POSIX: one queue per direction, opened by
//! name. A zero-length message is a hang-up: an end sends one when it is dropped,
//! and the watchdog of a two-process case sends one (or removes the SysV queue)
//! when the peer dies, so a blocked receive or send never hangs.

use ipcperf_sys::error::Errno;
use ipcperf_sys::mqueue::{Mq, MqName};
use ipcperf_sys::sysv_msg::{self, MsgBuf, SysvMsgQueue};

use super::{Link, LocalEnd, MechOptions, MechanismKind, PeerAddr, PeerHandoff};
use crate::error::{Error, Result};
use crate::mechanism::ByteStream;

fn read_limit(path: &str) -> Option<usize> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The largest message `kind` takes here, with the sysctl that sets it.
pub fn message_limit(kind: MechanismKind) -> Option<(usize, &'static str)> {
    match kind {
        MechanismKind::SysvMsg => {
            read_limit("/proc/sys/kernel/msgmax").map(|v| (v, "kernel.msgmax"))
        }
        MechanismKind::PosixMq => {
            read_limit("/proc/sys/fs/mqueue/msgsize_max").map(|v| (v, "fs.mqueue.msgsize_max"))
        }
        _ => None,
    }
}

fn check_limit(kind: MechanismKind, block: usize) -> Result<()> {
    if let Some((max, sysctl)) = message_limit(kind) {
        if block > max {
            return Err(Error::Refused(format!(
                "a {block}-byte message is larger than {} allows here: {sysctl} = {max} \
                 (raise it with `sysctl -w {sysctl}={block}`)",
                kind.name()
            )));
        }
    }
    Ok(())
}

pub(super) fn setup_sysv(opts: &MechOptions, block: usize) -> Result<Link> {
    check_limit(MechanismKind::SysvMsg, block)?;
    let q = SysvMsgQueue::create()?;
    let id = q.id();
    let end = |send_type, recv_type| PeerHandoff {
        kind: MechanismKind::SysvMsg,
        addr: PeerAddr::SysvMsg {
            id,
            send_type,
            recv_type,
            max: block,
        },
        opts: opts.clone(),
        fds: Vec::new(),
    };
    let mut link = Link::new(
        MechanismKind::SysvMsg,
        opts,
        Some(LocalEnd::Handoff(end(1, 2))),
        Some(end(2, 1)),
        None,
    );
    link.facts.push(("sysv_msqid".into(), id.to_string()));
    link.on_peer_death.push(Box::new(move || {
        let _ = sysv_msg::remove(id);
    }));
    link.guards.push(Box::new(q));
    Ok(link)
}

pub(super) fn setup_mq(opts: &MechOptions, block: usize) -> Result<Link> {
    check_limit(MechanismKind::PosixMq, block)?;
    let maxmsg = read_limit("/proc/sys/fs/mqueue/msg_max")
        .unwrap_or(10)
        .clamp(1, 10);
    let name = format!("/{}", ipcperf_sys::names::unique("mq"));
    let q = MqName::create(&name, maxmsg, block)?;
    let end = |write| PeerHandoff {
        kind: MechanismKind::PosixMq,
        addr: PeerAddr::Mq {
            name: name.clone(),
            write,
            max: block,
        },
        opts: opts.clone(),
        fds: Vec::new(),
    };
    let mut link = Link::new(
        MechanismKind::PosixMq,
        opts,
        Some(LocalEnd::Handoff(end(true))),
        Some(end(false)),
        None,
    );
    link.facts.push(("mq_maxmsg".into(), maxmsg.to_string()));
    link.facts.push(("mq_name".into(), name.clone()));
    // The peer is gone: make room for a blocked sender and wake a blocked receiver.
    let w = Mq::open(&name, true)?;
    let r = Mq::open(&name, false)?;
    let _ = (r.name(), w.name());
    let mut scratch = vec![0u8; block];
    let scratch = std::sync::Mutex::new(std::mem::take(&mut scratch));
    link.on_peer_death.push(Box::new(move || {
        let mut s = scratch.lock().unwrap_or_else(|p| p.into_inner());
        let _ = r.try_receive(&mut s);
        let _ = w.try_send(&[]);
    }));
    link.guards.push(Box::new(q));
    Ok(link)
}

/// One end of a SysV queue.
#[derive(Debug)]
pub struct SysvMsgEnd {
    id: i32,
    send_type: i64,
    recv_type: i64,
    buf: MsgBuf,
    max: usize,
}

impl SysvMsgEnd {
    pub(super) fn open(id: i32, send_type: i64, recv_type: i64, max: usize) -> SysvMsgEnd {
        SysvMsgEnd {
            id,
            send_type,
            recv_type,
            buf: MsgBuf::new(max),
            max,
        }
    }

    #[cold]
    fn err(op: &'static str, e: Errno) -> Error {
        match e {
            Errno::EIDRM | Errno::EINVAL => Error::Peer(format!(
                "{op} on sysv-msg: the queue was removed (the other side is gone)"
            )),
            e => Error::io(op, "sysv-msg", e),
        }
    }
}

impl ByteStream for SysvMsgEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        if buf.len() > self.max {
            return Err(Error::Invalid(format!(
                "a {}-byte message on a {}-byte sysv-msg end",
                buf.len(),
                self.max
            )));
        }
        sysv_msg::send(self.id, self.send_type, buf, &mut self.buf, false)
            .map_err(|e| Self::err("msgsnd", e))
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        sysv_msg::recv(self.id, self.recv_type, buf, &mut self.buf)
            .map_err(|e| Self::err("msgrcv", e))
    }
}

impl Drop for SysvMsgEnd {
    fn drop(&mut self) {
        // Hang up: a zero-length message wakes the other side if it waits for one.
        let _ = sysv_msg::send(self.id, self.send_type, &[], &mut self.buf, true);
    }
}

/// One end of a POSIX queue (sending or receiving).
#[derive(Debug)]
pub struct MqEnd {
    q: Mq,
    prio: u32,
    write: bool,
}

impl MqEnd {
    pub(super) fn open(name: &str, write: bool, opts: &MechOptions) -> Result<MqEnd> {
        Ok(MqEnd {
            q: Mq::open(name, write)?,
            prio: opts.mq_priority.unwrap_or(0),
            write,
        })
    }
}

impl ByteStream for MqEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        self.q
            .send(buf, self.prio)
            .map_err(|e| Error::io("mq_send", "posix-mq", e))
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.q
            .receive(buf)
            .map_err(|e| Error::io("mq_receive", "posix-mq", e))
    }
}

impl Drop for MqEnd {
    fn drop(&mut self) {
        if self.write {
            // Hang up, without waiting if the queue is full.
            let _ = self.q.try_send(&[]);
        }
    }
}
