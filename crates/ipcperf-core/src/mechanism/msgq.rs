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

use super::{
    Link, LocalEnd, MechOptions, Mechanism, MechanismInfo, MechanismKind, PeerAddr, PeerHandoff,
    RoundTripShape,
};
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

fn setup_sysv(opts: &MechOptions, block: usize) -> Result<Link> {
    check_limit(MechanismKind::SysvMsg, block)?;
    let q = SysvMsgQueue::create()?;
    let id = q.id();
    // A message bigger than the whole queue would wait for room forever.
    if let Some(cap) = sysv_msg::qbytes(id) {
        if block > cap {
            return Err(Error::Refused(format!(
                "a {block}-byte message does not fit a sysv-msg queue here, which holds at \
                 most {cap} bytes: kernel.msgmnb = {cap} (raise it with \
                 `sysctl -w kernel.msgmnb={block}`)"
            )));
        }
    }
    let end = |send_type, recv_type| PeerHandoff {
        kind: MechanismKind::SysvMsg,
        addr: PeerAddr::SysvMsg {
            id,
            send_type,
            recv_type,
            max: block,
            recv_id: None,
        },
        opts: opts.clone(),
        fds: Vec::new(),
    };
    let mut link = Link::new(
        MechanismKind::SysvMsg,
        opts,
        Some(LocalEnd::Handoff(Box::new(end(1, 2)))),
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

/// Fan-in over SysV queues: every client sends its requests to one queue, with
/// its own message type (1 to N); the server receives any type from it (in
/// arrival order) and answers on a second queue with the same type, which only
/// that client receives.
fn setup_sysv_fan_in(
    opts: &MechOptions,
    block: usize,
    clients: usize,
) -> Result<(Link, Vec<PeerHandoff>)> {
    check_limit(MechanismKind::SysvMsg, block)?;
    let requests = SysvMsgQueue::create()?;
    let answers = SysvMsgQueue::create()?;
    let (req, ans) = (requests.id(), answers.id());
    if let Some(cap) = sysv_msg::qbytes(req) {
        if block > cap {
            return Err(Error::Refused(format!(
                "a {block}-byte message does not fit a sysv-msg queue here, which holds at \
                 most {cap} bytes: kernel.msgmnb = {cap} (raise it with \
                 `sysctl -w kernel.msgmnb={block}`)"
            )));
        }
    }
    let end = |id: i32, recv_id: i32, send_type: i64, recv_type: i64| PeerHandoff {
        kind: MechanismKind::SysvMsg,
        addr: PeerAddr::SysvMsg {
            id,
            send_type,
            recv_type,
            max: block,
            recv_id: Some(recv_id),
        },
        opts: opts.clone(),
        fds: Vec::new(),
    };
    // The server: receive any type of request, answer with the type it came with.
    let mut link = Link::new(
        MechanismKind::SysvMsg,
        opts,
        None,
        Some(end(ans, req, 0, 0)),
        None,
    );
    let ends = (1..=clients as i64)
        .map(|t| end(req, ans, t, t))
        .collect::<Vec<_>>();
    link.facts
        .push(("sysv_msqid".into(), format!("{req},{ans}")));
    link.on_peer_death.push(Box::new(move || {
        let _ = sysv_msg::remove(req);
        let _ = sysv_msg::remove(ans);
    }));
    link.guards.push(Box::new(requests));
    link.guards.push(Box::new(answers));
    Ok((link, ends))
}

fn setup_mq(opts: &MechOptions, block: usize) -> Result<Link> {
    check_limit(MechanismKind::PosixMq, block)?;
    let maxmsg = read_limit("/proc/sys/fs/mqueue/msg_max")
        .unwrap_or(10)
        .clamp(1, 10);
    let name = format!("/{}", ipcperf_sys::names::unique("mq"));
    // Over a system limit (this user's queue bytes, the namespace's queue count):
    // a case this machine cannot run, refused with the limit named.
    let q = MqName::create(&name, maxmsg, block).map_err(|e| match e.errno {
        // Said by the limit, not the errno's words ("Too many open files").
        Errno::EMFILE | Errno::ENOSPC => {
            Error::Refused(format!("{} {} ({:?})", e.op, e.object, e.errno))
        }
        _ => Error::Sys(e),
    })?;
    // Both ends are opened here and travel as descriptors, so the watchdog keeps a
    // descriptor sharing each end's open description: on the peer's death it makes
    // both non-blocking, and the surviving side's next wait fails (EAGAIN) instead
    // of waiting for a message or a free slot that never comes.
    let writer = Mq::open(&name, true)?;
    let reader = Mq::open(&name, false)?;
    let w = Mq::from_fd(writer.try_clone_fd()?, &name);
    let r = Mq::from_fd(reader.try_clone_fd()?, &name);
    let end = |write: bool, mq: Mq| -> Result<PeerHandoff> {
        Ok(PeerHandoff {
            kind: MechanismKind::PosixMq,
            addr: PeerAddr::Mq {
                name: name.clone(),
                write,
                max: block,
            },
            opts: opts.clone(),
            fds: vec![mq.try_clone_fd()?],
        })
    };
    let mut link = Link::new(
        MechanismKind::PosixMq,
        opts,
        Some(LocalEnd::Handoff(Box::new(end(true, writer)?))),
        Some(end(false, reader)?),
        None,
    );
    link.facts.push(("mq_maxmsg".into(), maxmsg.to_string()));
    link.facts.push(("mq_name".into(), name.clone()));
    let scratch = std::sync::Mutex::new(vec![0u8; block]);
    link.on_peer_death.push(Box::new(move || {
        let _ = w.set_nonblocking();
        let _ = r.set_nonblocking();
        // A writer blocked on a full queue: taking one message moves its message
        // in and wakes it. A reader blocked on an empty queue: a hang-up (a
        // zero-length message) wakes it. Never both, or the hang-up fills the slot.
        let mut s = scratch.lock().unwrap_or_else(|p| p.into_inner());
        if r.try_receive(&mut s).is_none() {
            let _ = w.try_send(&[]);
        }
    }));
    link.guards.push(Box::new(q));
    Ok(link)
}

/// One end of a SysV queue.
#[derive(Debug)]
pub struct SysvMsgEnd {
    id: i32,
    recv_id: i32,
    send_type: i64,
    recv_type: i64,
    buf: MsgBuf,
    max: usize,
}

impl SysvMsgEnd {
    pub(super) fn open(
        id: i32,
        recv_id: Option<i32>,
        send_type: i64,
        recv_type: i64,
        max: usize,
    ) -> SysvMsgEnd {
        SysvMsgEnd {
            id,
            recv_id: recv_id.unwrap_or(id),
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
        // Type 0 answers the sender of the last message (its type is in the buffer).
        let t = if self.send_type == 0 {
            self.buf.mtype()
        } else {
            self.send_type
        };
        sysv_msg::send(self.id, t, buf, &mut self.buf, false).map_err(|e| Self::err("msgsnd", e))
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        sysv_msg::recv(self.recv_id, self.recv_type, buf, &mut self.buf)
            .map_err(|e| Self::err("msgrcv", e))
    }
}

impl Drop for SysvMsgEnd {
    fn drop(&mut self) {
        // Hang up: a zero-length message wakes the other side if it waits for one
        // (not from a fan-in server: its clients learn of its end otherwise).
        if self.send_type == 0 {
            return;
        }
        let _ = sysv_msg::send(self.id, self.send_type, &[], &mut self.buf, true);
    }
}

/// One end of a POSIX queue (sending or receiving).
#[derive(Debug)]
pub struct MqEnd {
    q: Mq,
    prio: u32,
    write: bool,
    /// A receive into a buffer shorter than the queue's messages (a replay's
    /// message of its own size) goes through this, as long as the queue's.
    spare: Vec<u8>,
}

impl MqEnd {
    /// This end from the descriptor set up with the link (or, without one, by name).
    pub(super) fn open(
        name: &str,
        write: bool,
        fd: Option<std::os::fd::OwnedFd>,
        opts: &MechOptions,
    ) -> Result<MqEnd> {
        let q = match fd {
            Some(fd) => Mq::from_fd(fd, name),
            None => Mq::open(name, write)?,
        };
        Ok(MqEnd {
            q,
            prio: opts.mq_priority.unwrap_or(0),
            write,
            spare: Vec::new(),
        })
    }

    /// A message into a buffer shorter than the queue's size: received whole
    /// into `spare`, then copied (it must fit: a message is never split).
    #[cold]
    fn read_short(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.spare.is_empty() {
            let size = self.q.msg_size().map_err(|e| Self::err("mq_getattr", e))?;
            self.spare = vec![0u8; size.max(1)];
        }
        let n = self
            .q
            .receive(&mut self.spare)
            .map_err(|e| Self::err("mq_receive", e))?;
        if n > buf.len() {
            return Err(Error::Peer(format!(
                "posix-mq: a message of {n} bytes where {} were expected",
                buf.len()
            )));
        }
        buf[..n].copy_from_slice(&self.spare[..n]);
        Ok(n)
    }

    #[cold]
    fn err(op: &'static str, e: Errno) -> Error {
        match e {
            // Only the watchdog makes a queue non-blocking: the peer has died.
            Errno::EAGAIN => Error::Peer(format!(
                "{op} on posix-mq: the other side is gone (the peer ended)"
            )),
            e => Error::io(op, "posix-mq", e),
        }
    }
}

impl ByteStream for MqEnd {
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> Result<()> {
        self.q
            .send(buf, self.prio)
            .map_err(|e| Self::err("mq_send", e))
    }

    #[inline]
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        match self.q.receive(buf) {
            Err(Errno::EMSGSIZE) => self.read_short(buf),
            r => r.map_err(|e| Self::err("mq_receive", e)),
        }
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

/// The System V message queue: one queue, a message type per direction.
pub struct SysvMsg;

impl Mechanism for SysvMsg {
    type End = SysvMsgEnd;

    const INFO: MechanismInfo = MechanismInfo {
        names: "SysV queue id (key 0x7<pid><seq>)",
        ..MechanismInfo::new(
            MechanismKind::SysvMsg,
            "sysv-msg",
            "System V message queue (msgget/msgsnd/msgrcv); one queue, a type per direction",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup_sysv(opts, block)
    }

    fn open(h: PeerHandoff, _timeout_ms: i32) -> Result<SysvMsgEnd> {
        match h.addr {
            PeerAddr::SysvMsg {
                id,
                send_type,
                recv_type,
                max,
                recv_id,
            } => Ok(SysvMsgEnd::open(id, recv_id, send_type, recv_type, max)),
            other => Err(Error::Peer(format!("sysv-msg cannot open {other:?}"))),
        }
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::TwoWay)
    }

    fn setup_fan_in(
        opts: &MechOptions,
        block: usize,
        clients: usize,
    ) -> Option<Result<(Link, Vec<PeerHandoff>)>> {
        Some(setup_sysv_fan_in(opts, block, clients))
    }
}

/// The POSIX message queue: one per direction, opened by name.
pub struct PosixMq;

impl Mechanism for PosixMq {
    type End = MqEnd;

    fn poll_fd(end: &mut MqEnd) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        Some(end.q.as_fd())
    }

    const INFO: MechanismInfo = MechanismInfo {
        names: "/ipcperf-<pid>-... queue name",
        ..MechanismInfo::new(
            MechanismKind::PosixMq,
            "posix-mq",
            "POSIX message queue (mq_open/mq_send/mq_receive; --priority)",
        )
    };

    fn setup(opts: &MechOptions, block: usize) -> Result<Link> {
        setup_mq(opts, block)
    }

    fn open(mut h: PeerHandoff, _timeout_ms: i32) -> Result<MqEnd> {
        let fd = h.fds.drain(..).next();
        match &h.addr {
            PeerAddr::Mq { name, write, .. } => MqEnd::open(name, *write, fd, &h.opts),
            other => Err(Error::Peer(format!("posix-mq cannot open {other:?}"))),
        }
    }

    fn round_trip() -> Option<RoundTripShape> {
        Some(RoundTripShape::OneWayPair)
    }

    fn describe(opts: &MechOptions, out: &mut Vec<(String, String)>) {
        if let Some(p) = opts.mq_priority {
            out.push(("priority".into(), p.to_string()));
        }
    }
}
