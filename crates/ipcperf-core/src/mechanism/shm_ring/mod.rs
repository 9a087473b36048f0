//! `shm`: a single-producer single-consumer byte ring in shared memory (issue 3),
//! as a [`ByteStream`]. The memory is a memfd (threads, or a peer handed the
//! descriptor) or a named POSIX object (a peer that opens it by name). How a side
//! that must wait is woken is chosen with [`Wake`]: `spin` (busy-poll, burning a
//! CPU), `futex`, `eventfd`, `sem` (POSIX semaphores in the shared page), or
//! `adaptive` (spin for a bounded time, then sleep on the futex: what production
//! rings do).
//!
//! Protocol: `head` (bytes written) and `tail` (bytes read) only grow. A side that
//! must wait raises its `waiting` flag, looks once more, and sleeps; the other side,
//! after publishing, wakes it only if the flag is up (so the steady state makes no
//! system call). Every wait is bounded (ticks of 250 ms, at most [`RING_WAIT`]).
//!
//! The message layout ([`RingHandoff::messages`], `--shm-layout message`, the
//! default for round trips) keeps the byte stream's meaning but writes each
//! message as a record: an 8-byte header word and the payload after it. The
//! reader waits on the header word where the next record starts, so the line that
//! tells it a message is there also holds the message's first bytes: one
//! cache-line transfer where the stream layout needs two in a row (the head's
//! line, then the data's). Records start on a cache line. The header word is the
//! record's length XORed with the complement of its stream position + 1, and the
//! reader takes it as a record only when it decodes, at the position it expects,
//! to a length no more than a quarter of the ring (the ring less a byte with one
//! slot, below): a header of an earlier lap
//! (a multiple of the capacity back) decodes to at least the capacity, never-written
//! memory (zero) to nearly 2^64, and a payload left from an earlier lap would need
//! its high bits to hold this position's complement (46 bits at 1 MiB by chance,
//! and no pattern ipcperf writes). That holds only of whole words: a payload that
//! ended inside a word and left an older header's high bytes beside its own low
//! ones could complete a header (two nearby positions' complements share their
//! high bytes), and a replay of mixed sizes read such a phantom record in about
//! 1.5% of its wraps. So the writer zeroes the rest of a payload's last word:
//! every word of the ring is a header, a whole payload word, or a payload's last
//! bytes followed by zeros (whose high bytes decode to nearly 2^64).
//! One word, read once, gives both the news and
//! the length: a second load after the news (a separate length word) cost this
//! VM 60-90 ns a round trip at 64 B. The writer writes the record's own lines and
//! nothing else, as a cache-line ping-pong does.
//!
//! With one slot ([`RingHandoff::one_slot`], small round trips' default) every
//! record takes the whole ring, so each message lies at the ring's start, where
//! the last one did: the lines the writer fills are the ones the reader just read,
//! as in a cache-line ping-pong. A message longer than the ring less a header goes
//! as several records, one at a time.
//!
//! Registered as the `shm` mechanism: [`RingObject`] is the set-up object (kept by
//! the link), each side opens its end with [`ShmRing::open_end`]. A watchdog that
//! sees the peer die raises the `dead` word and wakes both directions
//! ([`RingObject::on_peer_death`]), so no side waits out [`RING_WAIT`].

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::endpoint::ByteStream;
use crate::error::{Error, Result};
use ipcperf_sys::eventfd::Eventfd;
use ipcperf_sys::futex;
use ipcperf_sys::sem::ShmSem;
use ipcperf_sys::shm::{shm_create, shm_open_existing, SharedMem, ShmName};

pub use super::wake::{Wake, DEFAULT_SPIN_NS};

/// The longest a side waits for the other before it is an error.
pub const RING_WAIT: Duration = Duration::from_secs(5);
const TICK: Duration = Duration::from_millis(250);

const HDR: usize = 8192;
/// Zero-copy: the most a writer builds in place before it publishes.
const LOAN_STEP: usize = 64 * 1024;
const OFF_HEAD: usize = 0;
const OFF_TAIL: usize = 128;
const OFF_CLOSED: usize = 256;
// Per direction: [data-ready for the consumer, space-ready for the producer].
const OFF_WAITING: [usize; 2] = [384, 512];
const OFF_SEQ: [usize; 2] = [448, 576];
const OFF_SEM: [usize; 2] = [640, 704];
const OFF_DEAD: usize = 768;
/// Fan-out: the cursors of readers 1 and on, a cache line each (reader 0's is
/// the tail).
const OFF_CURSORS: usize = 1024;
/// The most readers one ring feeds.
pub const MAX_READERS: usize = 1 + (HDR - OFF_CURSORS) / 64;
const DATA: usize = 0;
const SPACE: usize = 1;

/// What the other side needs to open the ring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RingHandoff {
    pub capacity: usize,
    pub wake: Wake,
    /// Streams lend the ring's memory: the writer builds blocks in place, the
    /// reader looks at them in place.
    #[serde(default)]
    pub zero_copy: bool,
    /// `adaptive`: how long a wait spins before it sleeps.
    #[serde(default)]
    pub spin_ns: u64,
    /// Open this named POSIX object; None: the first descriptor is a memfd.
    pub name: Option<String>,
    /// Fan-out: how many readers each read every byte (0 or 1: one), and which
    /// of them a consumer end is.
    #[serde(default)]
    pub readers: usize,
    #[serde(default)]
    pub cursor: usize,
    /// The message layout: each write a record with its own stamp (see the
    /// module's text).
    #[serde(default)]
    pub messages: bool,
    /// The message layout with one place for a message: every record takes the
    /// whole ring, so each starts at the ring's first byte (round trips, one
    /// message in flight each way).
    #[serde(default)]
    pub one_slot: bool,
}

/// Where reader `i`'s cursor lies.
fn cursor_off(i: usize) -> usize {
    if i == 0 {
        OFF_TAIL
    } else {
        OFF_CURSORS + 64 * (i - 1)
    }
}

/// One end of the ring (the producer writes, the consumer reads).
pub struct ShmRing {
    mem: Arc<SharedMem>,
    cap: usize,
    producer: bool,
    wake: Wake,
    spin_ns: u64,
    zero_copy: bool,
    sems: Vec<ShmSem>,
    efds: Vec<Eventfd>,
    /// This end's own index (head for the producer, tail for the consumer), kept
    /// here so it is never read back from the shared line.
    mine: u64,
    /// The other end's index as last read: the producer looks at the shared tail
    /// only when the ring seems full, the consumer at the shared head only when it
    /// seems empty, so the steady state moves no line it does not need.
    seen: u64,
    /// Readers fed by this ring (1 but for fan-out), and where this consumer's
    /// cursor lies (the tail's offset, but for fan-out's other readers).
    readers: usize,
    tail_off: usize,
    /// The message layout; the consumer's place in the record it is reading:
    /// bytes left, where they are, and where the next record starts.
    messages: bool,
    one_slot: bool,
    left: usize,
    rec_at: usize,
    rec_end: u64,
    /// Set when this end also owns the object (made by [`ShmRing::create`]).
    _owner: Option<RingObject>,
}

fn pow2(capacity: usize) -> Result<usize> {
    if capacity < 512 || !capacity.is_power_of_two() {
        return Err(Error::Invalid(format!(
            "ring capacity {capacity}: a power of two of at least 512"
        )));
    }
    Ok(capacity)
}

/// The ring's shared memory and wake-up objects, as created: owns the POSIX name
/// (removed on drop) and the semaphores (initialized here).
pub struct RingObject {
    mem: Arc<SharedMem>,
    _sems: Vec<ShmSem>,
    efds: Vec<Eventfd>,
    _name: Option<ShmName>,
    pub handoff: RingHandoff,
}

impl RingObject {
    pub fn create(capacity: usize, wake: Wake, named: bool) -> Result<RingObject> {
        RingObject::create_with_spin(capacity, wake, named, DEFAULT_SPIN_NS)
    }

    /// As [`RingObject::create`], with an `adaptive` wait's spin budget.
    pub fn create_with_spin(
        capacity: usize,
        wake: Wake,
        named: bool,
        spin_ns: u64,
    ) -> Result<RingObject> {
        let cap = pow2(capacity)?;
        let (mem, name) = if named {
            let (g, m) = shm_create("ring", HDR + cap)?;
            (Arc::new(m), Some(g))
        } else {
            (Arc::new(SharedMem::memfd("ring", HDR + cap)?), None)
        };
        let mut sems = Vec::new();
        let mut efds = Vec::new();
        match wake {
            Wake::Sem => {
                for off in OFF_SEM {
                    sems.push(ShmSem::init(mem.clone(), off, 0)?);
                }
            }
            Wake::Eventfd => {
                for _ in 0..2 {
                    efds.push(Eventfd::semaphore(0)?);
                }
            }
            _ => {}
        }
        let handoff = RingHandoff {
            capacity: cap,
            wake,
            zero_copy: false,
            spin_ns,
            name: name.as_ref().map(|n| n.name().to_string()),
            readers: 1,
            cursor: 0,
            messages: false,
            one_slot: false,
        };
        Ok(RingObject {
            mem,
            _sems: sems,
            efds,
            _name: name,
            handoff,
        })
    }

    /// Feed `n` readers, each reading every byte with a cursor of its own (the
    /// writer waits for the slowest). Only the futex-based waits wake many at
    /// once: `eventfd` and `sem` wake one waiter per post.
    pub fn fan_out(mut self, n: usize) -> Result<RingObject> {
        if n == 0 || n > MAX_READERS {
            return Err(Error::Invalid(format!(
                "a ring feeds from 1 to {MAX_READERS} readers, not {n}"
            )));
        }
        if n > 1 && matches!(self.handoff.wake, Wake::Eventfd | Wake::Sem) {
            return Err(Error::Refused(format!(
                "--wake {} wakes one waiter per post: a ring read by many readers waits by \
                 spin, futex or adaptive",
                self.handoff.wake.name()
            )));
        }
        self.handoff.readers = n;
        Ok(self)
    }

    /// Lend the ring's memory to streams (see [`RingHandoff::zero_copy`]).
    pub fn lend_in_place(mut self, on: bool) -> RingObject {
        self.handoff.zero_copy = on;
        self
    }

    /// Write each message as a record with its own stamp (see
    /// [`RingHandoff::messages`]). Zero-copy lends raw bytes, so it keeps the
    /// stream layout.
    pub fn messages(mut self, on: bool) -> Result<RingObject> {
        if on && self.handoff.zero_copy {
            return Err(Error::Refused(
                "--zero-copy lends the ring's bytes in place: it keeps the stream layout \
                 (--shm-layout stream)"
                    .into(),
            ));
        }
        self.handoff.messages = on;
        Ok(self)
    }

    /// In the message layout, give every record the whole ring (see
    /// [`RingHandoff::one_slot`]); a message longer than the ring less a header
    /// goes as several records, one at a time.
    pub fn one_slot(mut self, on: bool) -> Result<RingObject> {
        if on && !self.handoff.messages {
            return Err(Error::Invalid(
                "one slot is a form of the message layout".into(),
            ));
        }
        self.handoff.one_slot = on;
        Ok(self)
    }

    /// The descriptors one end needs: the memfd (unless named), then the eventfds.
    pub fn end_fds(&self) -> Result<Vec<OwnedFd>> {
        let mut fds = Vec::new();
        if self.handoff.name.is_none() {
            fds.push(self.mem.dup_fd()?);
        }
        for e in &self.efds {
            fds.push(e.try_clone_fd()?);
        }
        Ok(fds)
    }

    /// What wakes both sides for good when the peer is gone: the `dead` word is
    /// raised and every wake-up object is signalled.
    pub fn on_peer_death(&self) -> Result<impl Fn() + Send + 'static> {
        let mem = self.mem.clone();
        let wake = self.handoff.wake;
        let sems: Vec<ShmSem> = if wake == Wake::Sem {
            OFF_SEM
                .iter()
                .map(|&o| ShmSem::attach(mem.clone(), o))
                .collect()
        } else {
            Vec::new()
        };
        let efds = self
            .efds
            .iter()
            .map(|e| e.try_clone_fd().map(Eventfd::from_fd))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(move || {
            mem.atomic_u32(OFF_DEAD).store(1, Ordering::SeqCst);
            for off in OFF_SEQ {
                let seq = mem.atomic_u32(off);
                seq.fetch_add(1, Ordering::SeqCst);
                let _ = futex::wake(seq, i32::MAX as u32);
            }
            for s in &sems {
                let _ = s.post();
            }
            for e in &efds {
                let _ = e.write(1);
            }
        })
    }
}

impl ShmRing {
    /// Create the ring; returns the producer end (which owns the object), the
    /// handoff and the descriptors for the consumer.
    pub fn create(
        capacity: usize,
        wake: Wake,
        named: bool,
    ) -> Result<(ShmRing, RingHandoff, Vec<OwnedFd>)> {
        let obj = RingObject::create(capacity, wake, named)?;
        let h = obj.handoff.clone();
        let mut w = ShmRing::open_end(&h, obj.end_fds()?, true)?;
        let fds = obj.end_fds()?;
        w._owner = Some(obj);
        Ok((w, h, fds))
    }

    /// The consumer end, from the handoff and its descriptors.
    pub fn open(h: &RingHandoff, fds: Vec<OwnedFd>) -> Result<ShmRing> {
        ShmRing::open_end(h, fds, false)
    }

    /// One end (`producer` or consumer), from the handoff and its descriptors.
    pub fn open_end(h: &RingHandoff, mut fds: Vec<OwnedFd>, producer: bool) -> Result<ShmRing> {
        let cap = pow2(h.capacity)?;
        let mem = Arc::new(match &h.name {
            Some(n) => shm_open_existing(n, HDR + cap)?,
            None => {
                if fds.is_empty() {
                    return Err(Error::Peer("the ring handoff carried no memfd".into()));
                }
                SharedMem::from_fd(fds.remove(0), HDR + cap)?
            }
        });
        let sems = if h.wake == Wake::Sem {
            OFF_SEM
                .iter()
                .map(|&o| ShmSem::attach(mem.clone(), o))
                .collect()
        } else {
            Vec::new()
        };
        let efds = if h.wake == Wake::Eventfd {
            if fds.len() != 2 {
                return Err(Error::Peer("the ring handoff lacks its eventfds".into()));
            }
            fds.into_iter().map(Eventfd::from_fd).collect()
        } else {
            Vec::new()
        };
        let readers = h.readers.max(1);
        if readers > MAX_READERS || h.cursor >= readers {
            return Err(Error::Peer(format!(
                "ring cursor {} of {readers} readers",
                h.cursor
            )));
        }
        let mut r = ShmRing {
            mem,
            cap,
            producer,
            wake: h.wake,
            spin_ns: h.spin_ns,
            zero_copy: h.zero_copy,
            sems,
            efds,
            mine: 0,
            seen: 0,
            readers,
            tail_off: cursor_off(h.cursor),
            messages: h.messages,
            one_slot: h.one_slot && h.messages,
            left: 0,
            rec_at: 0,
            rec_end: 0,
            _owner: None,
        };
        // A fresh ring starts at 0; an end opened later (never, today) picks up
        // where the indices stand.
        let head = r.head().load(Ordering::Acquire);
        (r.mine, r.seen) = if producer {
            (head, r.slowest())
        } else {
            (r.tail().load(Ordering::Acquire), head)
        };
        Ok(r)
    }

    pub fn wake(&self) -> Wake {
        self.wake
    }

    #[inline]
    fn head(&self) -> &AtomicU64 {
        self.mem.atomic_u64(OFF_HEAD)
    }
    /// This consumer's cursor (the tail, but for fan-out's other readers).
    #[inline]
    fn tail(&self) -> &AtomicU64 {
        self.mem.atomic_u64(self.tail_off)
    }
    /// The producer's view of the readers: the slowest one's cursor.
    #[inline]
    fn slowest(&self) -> u64 {
        let mut min = self.mem.atomic_u64(OFF_TAIL).load(Ordering::Acquire);
        for i in 1..self.readers {
            min = min.min(self.mem.atomic_u64(cursor_off(i)).load(Ordering::Acquire));
        }
        min
    }
    #[inline]
    fn closed(&self) -> &AtomicU32 {
        self.mem.atomic_u32(OFF_CLOSED)
    }
    #[inline]
    fn dead(&self) -> bool {
        self.mem.atomic_u32(OFF_DEAD).load(Ordering::Relaxed) != 0
    }
}

impl std::fmt::Debug for ShmRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmRing")
            .field("cap", &self.cap)
            .field("producer", &self.producer)
            .field("wake", &self.wake)
            .finish()
    }
}

impl ShmRing {
    /// Free bytes for the producer (at least one; waits, bounded, while full).
    /// The consumer's cursor is read again when fewer than `want` bytes are
    /// known free, so a block goes in one piece whenever the ring has room for
    /// it, not in two around a stale cursor.
    #[inline]
    fn space(&mut self, want: usize) -> Result<usize> {
        let mut free = self.cap - (self.mine - self.seen) as usize;
        if free < want.max(1) {
            self.seen = self.slowest();
            free = self.cap - (self.mine - self.seen) as usize;
            if free == 0 {
                self.wait_for(SPACE, |r| (r.mine - r.slowest()) < r.cap as u64)?;
                self.seen = self.slowest();
                free = self.cap - (self.mine - self.seen) as usize;
            }
        }
        Ok(free)
    }

    /// Bytes ready for the consumer (0: closed and drained; waits, bounded).
    #[inline]
    fn ready(&mut self) -> Result<usize> {
        let mut avail = (self.seen - self.mine) as usize;
        if avail == 0 {
            self.seen = self.head().load(Ordering::Acquire);
            avail = (self.seen - self.mine) as usize;
            if avail == 0 {
                self.wait_for(DATA, |r| {
                    r.head().load(Ordering::Acquire) != r.mine
                        || r.closed().load(Ordering::Acquire) != 0
                })?;
                self.seen = self.head().load(Ordering::Acquire);
                avail = (self.seen - self.mine) as usize;
            }
        }
        Ok(avail)
    }

    /// Whether the consumer has bytes to read, or the ring is closed, now (never
    /// waits): a fan-in server sweeps its clients' rings with it.
    #[inline]
    pub fn has_data(&mut self) -> bool {
        debug_assert!(!self.producer);
        if self.messages {
            return self.left > 0
                || self.stamped()
                || self.closed().load(Ordering::Acquire) != 0
                || self.dead();
        }
        if self.seen == self.mine {
            self.seen = self.head().load(Ordering::Acquire);
        }
        self.seen != self.mine || self.closed().load(Ordering::Acquire) != 0 || self.dead()
    }

    /// Publish `n` bytes written at the head.
    #[inline]
    fn publish(&mut self, n: usize) -> Result<()> {
        self.mine += n as u64;
        self.head().store(self.mine, Ordering::Release);
        self.notify(DATA)
    }

    /// Give back `n` bytes read at the tail.
    #[inline]
    fn release(&mut self, n: usize) -> Result<()> {
        self.mine += n as u64;
        self.tail().store(self.mine, Ordering::Release);
        self.notify(SPACE)
    }

    /// Message layout: wait (bounded) until `need` bytes are free.
    #[inline]
    fn room(&mut self, need: usize) -> Result<()> {
        if self.cap - ((self.mine - self.seen) as usize) < need {
            self.seen = self.slowest();
            if self.cap - ((self.mine - self.seen) as usize) < need {
                self.wait_for(SPACE, |r| {
                    r.cap as u64 - (r.mine - r.slowest()) >= need as u64
                })?;
                self.seen = self.slowest();
            }
        }
        Ok(())
    }
}

impl Drop for ShmRing {
    fn drop(&mut self) {
        if self.producer {
            // End of stream: the consumer reads what is left, then 0.
            self.closed().store(1, Ordering::Release);
            let _ = self.notify(DATA);
        }
    }
}

mod records;
mod stream;
mod waits;
pub use records::rec_size;

#[cfg(test)]
mod tests;
