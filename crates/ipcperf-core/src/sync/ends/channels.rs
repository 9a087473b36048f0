//! Set/clear: the [`Channel`] of each primitive (hand a token to the other side
//! and wait for it to come back), opened from its objects.

use super::*;
/// Set/clear: give the other side a token, and wait for one from it.
pub trait Channel {
    /// Hand a token to the other side (set / post / wake).
    fn signal(&mut self) -> Result<()>;
    /// Wait (bounded) for a token from the other side and take it.
    fn wait(&mut self) -> Result<()>;
    /// Take a token from the other side if one is there, without waiting.
    fn try_take(&mut self) -> Result<bool>;
    /// Wait for a token and give one back: two calls, or one where the
    /// primitive takes and gives together (lmbench's `lat_sem`).
    #[inline]
    fn wait_then_signal(&mut self) -> Result<()> {
        self.wait()?;
        self.signal()
    }
    /// Whether [`Channel::wait_then_signal`] is one call (the loops then take
    /// that form on both sides).
    fn one_call(&self) -> bool {
        false
    }
}

/// Untimed waits end when a watcher ([`ipcperf_sys::signal::ProcessWatch`]) marks
/// the other side dead and gives the waiter a token: the token is then no answer.
#[derive(Clone, Default)]
pub struct Dead(pub Arc<std::sync::atomic::AtomicBool>);
impl Dead {
    #[inline]
    fn check(&self) -> Result<()> {
        if self.0.load(Ordering::Acquire) {
            return Err(Error::Peer(
                "the process on the other side died while we waited for its token".into(),
            ));
        }
        Ok(())
    }
    fn mark(&self) {
        self.0.store(true, Ordering::Release);
    }
}

pub struct SysvChannel {
    set: Arc<SysvSemSet>,
    mine: u16,
    theirs: u16,
    other: Option<i32>,
    one_call: bool,
    untimed: bool,
    dead: Dead,
}
impl Channel for SysvChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        self.set.op(self.theirs, 1, false, None)?;
        Ok(())
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        if self.untimed {
            self.set.op(self.mine, -1, false, None)?;
            return self.dead.check();
        }
        let mut ticks = 0;
        while !self.set.op(self.mine, -1, false, Some(WAIT_TICK))? {
            another_tick(self.other, &mut ticks)?;
        }
        Ok(())
    }
    #[inline]
    fn wait_then_signal(&mut self) -> Result<()> {
        if !self.one_call {
            self.wait()?;
            return self.signal();
        }
        if self.untimed {
            self.set.take_and_give(self.mine, self.theirs, None)?;
            return self.dead.check();
        }
        let mut ticks = 0;
        while !self
            .set
            .take_and_give(self.mine, self.theirs, Some(WAIT_TICK))?
        {
            another_tick(self.other, &mut ticks)?;
        }
        Ok(())
    }
    fn one_call(&self) -> bool {
        self.one_call
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(self.set.try_op(self.mine, -1)?)
    }
}

/// Two POSIX semaphores (named or in shared memory), one per direction.
pub struct SemChannel<S> {
    mine: S,
    theirs: S,
    other: Option<i32>,
    untimed: bool,
    dead: Dead,
}
impl<S: PosixSemaphore> Channel for SemChannel<S> {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        self.theirs.post()?;
        Ok(())
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        // The user-space fast path first; the bounded (clock-reading) wait only when
        // we are about to sleep anyway.
        if self.mine.try_wait()? {
            return self.dead.check();
        }
        if self.untimed {
            self.mine.wait()?;
            return self.dead.check();
        }
        let mut ticks = 0;
        while !self.mine.wait_timeout(WAIT_TICK)? {
            another_tick(self.other, &mut ticks)?;
        }
        Ok(())
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(self.mine.try_wait()?)
    }
}

/// Two futex words, one per direction: 1 = a token is waiting there.
pub struct FutexChannel {
    mem: Arc<SharedMem>,
    mine: usize,
    theirs: usize,
    other: Option<i32>,
    untimed: bool,
    dead: Dead,
}
impl Channel for FutexChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        let w = self.mem.atomic_u32(self.theirs);
        w.store(1, Ordering::Release);
        futex::wake(w, 1)?;
        Ok(())
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        let w = self.mem.atomic_u32(self.mine);
        let mut ticks = 0;
        loop {
            if w.swap(0, Ordering::Acquire) == 1 {
                return self.dead.check();
            }
            if self.untimed {
                futex::wait_untimed(w, 0)?;
                continue;
            }
            if futex::wait(w, 0, WAIT_TICK)? == FutexWait::TimedOut
                && w.load(Ordering::Acquire) == 0
            {
                another_tick(self.other, &mut ticks)?;
            }
        }
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(self.mem.atomic_u32(self.mine).swap(0, Ordering::Acquire) == 1)
    }
}

pub struct EventfdChannel {
    mine: Arc<EventFd>,
    theirs: Arc<EventFd>,
    other: Option<i32>,
    untimed: bool,
    dead: Dead,
}
impl Channel for EventfdChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        efd_give(&self.theirs)
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        // poll, then read: an eventfd has no end-of-file to end a blocking read.
        let mut ticks = 0;
        if self.untimed {
            loop {
                ipcperf_sys::fd::wait_readable_untimed(self.mine.as_fd())?;
                if efd_try(&self.mine)? {
                    return self.dead.check();
                }
            }
        }
        loop {
            if ipcperf_sys::fd::wait_ready(self.mine.as_fd(), false, WAIT_TICK.as_millis() as i32)?
            {
                if efd_try(&self.mine)? {
                    return self.dead.check();
                }
            } else {
                another_tick(self.other, &mut ticks)?;
            }
        }
    }
    fn try_take(&mut self) -> Result<bool> {
        efd_try(&self.mine)
    }
}

/// A one-byte token over two pipes. Blocking reads: when the other side dies its
/// write end closes and the read returns end-of-file, so it never hangs.
pub struct PipeChannel {
    w: OwnedFd,
    r: OwnedFd,
    byte: [u8; 1],
}
impl Channel for PipeChannel {
    #[inline]
    fn signal(&mut self) -> Result<()> {
        match ipcperf_sys::fd::write(self.w.as_fd(), &self.byte) {
            Ok(1) => Ok(()),
            Ok(_) => Err(Error::Peer("short write of a one-byte token".into())),
            Err(e) => Err(Error::io("write", "pipe", e)),
        }
    }
    #[inline]
    fn wait(&mut self) -> Result<()> {
        match ipcperf_sys::fd::read(self.r.as_fd(), &mut self.byte) {
            Ok(1) => Ok(()),
            Ok(_) => Err(Error::Peer("the other side closed its pipe".into())),
            Err(e) => Err(Error::io("read", "pipe", e)),
        }
    }
    fn try_take(&mut self) -> Result<bool> {
        if !ipcperf_sys::fd::wait_ready(self.r.as_fd(), false, 0)? {
            return Ok(false);
        }
        // Readable: a token, or end-of-file (no token, the other side is gone).
        match ipcperf_sys::fd::read(self.r.as_fd(), &mut self.byte) {
            Ok(n) => Ok(n == 1),
            Err(e) => Err(Error::io("read", "pipe", e)),
        }
    }
}

/// The set/clear tare: dummy calls that return success.
pub struct NopChannel;
impl Channel for NopChannel {
    #[inline(never)]
    fn signal(&mut self) -> Result<()> {
        std::hint::black_box(Ok(()))
    }
    #[inline(never)]
    fn wait(&mut self) -> Result<()> {
        std::hint::black_box(Ok(()))
    }
    fn try_take(&mut self) -> Result<bool> {
        Ok(false)
    }
}

pub(super) fn no_token() -> Error {
    Error::Timeout(format!(
        "no token from the other side within {} s: it is stuck or died",
        WAIT_LIMIT.as_secs()
    ))
}

/// A channel end of any primitive; see [`with_channel`].
pub enum AnyChannel {
    Sysv(SysvChannel),
    NamedSem(SemChannel<Arc<NamedSem>>),
    ShmSem(SemChannel<ShmSem>),
    Futex(FutexChannel),
    Eventfd(EventfdChannel),
    Pipe(PipeChannel),
    /// Set/clear does not apply (mutex, flock, fcntl: only the owner may release).
    None,
}

impl AnyChannel {
    /// The descriptors [`AnyChannel::poisoner`] writes to (the watcher's thread
    /// keeps them in its own table).
    pub fn poison_fds(&self) -> Vec<i32> {
        use std::os::fd::AsRawFd;
        match self {
            AnyChannel::Eventfd(c) => vec![c.mine.as_fd().as_raw_fd()],
            _ => Vec::new(),
        }
    }

    /// What a watcher calls when the other process has died: mark this end's
    /// other side dead, then give this end a token so an untimed wait returns
    /// (and sees the mark). A pipe needs none: its end-of-file says it.
    pub fn poisoner(&self) -> Box<dyn FnOnce() + Send> {
        match self {
            AnyChannel::Sysv(c) => {
                let (set, mine, dead) = (c.set.clone(), c.mine, c.dead.clone());
                Box::new(move || {
                    dead.mark();
                    let _ = set.op(mine, 1, false, None);
                })
            }
            AnyChannel::NamedSem(c) => {
                let (sem, dead) = (c.mine.clone(), c.dead.clone());
                Box::new(move || {
                    dead.mark();
                    let _ = sem.post();
                })
            }
            AnyChannel::ShmSem(c) => {
                let (sem, dead) = (c.mine.another(), c.dead.clone());
                Box::new(move || {
                    dead.mark();
                    let _ = sem.post();
                })
            }
            AnyChannel::Futex(c) => {
                let (mem, mine, dead) = (c.mem.clone(), c.mine, c.dead.clone());
                Box::new(move || {
                    dead.mark();
                    let w = mem.atomic_u32(mine);
                    w.store(1, Ordering::Release);
                    let _ = futex::wake(w, 1);
                })
            }
            AnyChannel::Eventfd(c) => {
                let (efd, dead) = (c.mine.clone(), c.dead.clone());
                Box::new(move || {
                    dead.mark();
                    let _ = efd_give(&efd);
                })
            }
            AnyChannel::Pipe(_) | AnyChannel::None => Box::new(|| {}),
        }
    }

    /// The process on the other side: while waiting for its token, its death is an
    /// error within a [`WAIT_TICK`] (without it, only [`WAIT_LIMIT`] ends a wait).
    /// Pipes need none: the other side's death closes its end.
    pub fn set_other_process(&mut self, pid: i32) {
        match self {
            AnyChannel::Sysv(c) => c.other = Some(pid),
            AnyChannel::NamedSem(c) => c.other = Some(pid),
            AnyChannel::ShmSem(c) => c.other = Some(pid),
            AnyChannel::Futex(c) => c.other = Some(pid),
            AnyChannel::Eventfd(c) => c.other = Some(pid),
            AnyChannel::Pipe(_) | AnyChannel::None => {}
        }
    }
}

/// Run `f` on the concrete channel inside `c`; None when set/clear does not apply.
#[macro_export]
macro_rules! with_channel {
    ($c:expr, |$x:ident| $body:expr) => {
        match $c {
            $crate::sync::ends::AnyChannel::Sysv($x) => Some($body),
            $crate::sync::ends::AnyChannel::NamedSem($x) => Some($body),
            $crate::sync::ends::AnyChannel::ShmSem($x) => Some($body),
            $crate::sync::ends::AnyChannel::Futex($x) => Some($body),
            $crate::sync::ends::AnyChannel::Eventfd($x) => Some($body),
            $crate::sync::ends::AnyChannel::Pipe($x) => Some($body),
            $crate::sync::ends::AnyChannel::None => None,
        }
    };
}

pub(super) fn open_channel(
    side: Side,
    s: &SyncSetup,
    mem: Option<Arc<SharedMem>>,
    sysv: Option<Arc<SysvSemSet>>,
    named: &[Arc<NamedSem>],
    efds: &[Arc<EventFd>],
    mut pipes: Vec<OwnedFd>,
) -> Result<AnyChannel> {
    let missing = || Error::Peer(format!("{} objects missing", s.primitive.name()));
    // (mine, theirs) as indices 1 = to-B, 2 = to-A.
    let (mine, theirs) = match side {
        Side::A => (2usize, 1usize),
        Side::B => (1, 2),
    };
    Ok(match s.primitive {
        Primitive::SysvSem | Primitive::SysvSemOneCall => AnyChannel::Sysv(SysvChannel {
            set: sysv.ok_or_else(missing)?,
            mine: [S_LOCK, S_TO_B, S_TO_A][mine],
            theirs: [S_LOCK, S_TO_B, S_TO_A][theirs],
            other: None,
            one_call: s.primitive == Primitive::SysvSemOneCall,
            untimed: s.untimed,
            dead: Dead::default(),
        }),
        Primitive::PosixSemNamed => AnyChannel::NamedSem(SemChannel {
            mine: named.get(mine).ok_or_else(missing)?.clone(),
            theirs: named.get(theirs).ok_or_else(missing)?.clone(),
            other: None,
            untimed: s.untimed,
            dead: Dead::default(),
        }),
        Primitive::PosixSem => {
            let mem = mem.ok_or_else(missing)?;
            let off = [OFF_SEM_LOCK, OFF_SEM_TO_B, OFF_SEM_TO_A];
            AnyChannel::ShmSem(SemChannel {
                mine: ShmSem::attach(mem.clone(), off[mine]),
                theirs: ShmSem::attach(mem, off[theirs]),
                other: None,
                untimed: s.untimed,
                dead: Dead::default(),
            })
        }
        Primitive::Futex => {
            let off = [OFF_FUTEX_LOCK, OFF_FUTEX_TO_B, OFF_FUTEX_TO_A];
            AnyChannel::Futex(FutexChannel {
                mem: mem.ok_or_else(missing)?,
                mine: off[mine],
                theirs: off[theirs],
                other: None,
                untimed: s.untimed,
                dead: Dead::default(),
            })
        }
        Primitive::Eventfd => AnyChannel::Eventfd(EventfdChannel {
            mine: efds.get(mine).ok_or_else(missing)?.clone(),
            theirs: efds.get(theirs).ok_or_else(missing)?.clone(),
            other: None,
            untimed: s.untimed,
            dead: Dead::default(),
        }),
        Primitive::Pipe => {
            if pipes.len() != 2 {
                return Err(Error::Invalid(
                    "the pipe channel's ends were already taken".into(),
                ));
            }
            // Owner keeps [to-B write, to-A read]; the peer gets [to-B read, to-A write].
            let (w, r) = match side {
                Side::A => {
                    let r = pipes.pop().expect("two");
                    (pipes.pop().expect("two"), r)
                }
                Side::B => {
                    let w = pipes.pop().expect("two");
                    (w, pipes.pop().expect("two"))
                }
            };
            AnyChannel::Pipe(PipeChannel { w, r, byte: [0] })
        }
        Primitive::Mutex | Primitive::Flock | Primitive::Fcntl => AnyChannel::None,
    })
}
