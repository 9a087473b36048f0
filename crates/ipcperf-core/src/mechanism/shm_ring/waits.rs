//! How a side that must wait sleeps and is woken: the waiting flag, the
//! wake-up of the chosen kind, and the bounded wait (ticks of 250 ms, at most
//! [`RING_WAIT`]) that turns a dead or stuck peer into an error.

use super::*;

impl ShmRing {
    /// Wake the other side if it waits for `what` (DATA or SPACE): nothing to do
    /// when both spin, so that case costs one compare where it is called.
    #[inline(always)]
    pub(super) fn notify(&self, what: usize) -> Result<()> {
        if self.wake == Wake::Spin {
            return Ok(());
        }
        self.wake_other(what)
    }

    #[inline(never)]
    pub(super) fn wake_other(&self, what: usize) -> Result<()> {
        fence(Ordering::SeqCst);
        let flag = self.mem.atomic_u32(OFF_WAITING[what]);
        if flag.load(Ordering::Relaxed) == 0 || flag.swap(0, Ordering::SeqCst) == 0 {
            return Ok(());
        }
        match self.wake {
            Wake::Futex | Wake::Adaptive => {
                let seq = self.mem.atomic_u32(OFF_SEQ[what]);
                seq.fetch_add(1, Ordering::SeqCst);
                // Every reader of a fan-out ring may wait for the same data.
                let n = if what == DATA { self.readers as u32 } else { 1 };
                futex::wake(seq, n)?;
            }
            Wake::Sem => self.sems[what].post()?,
            Wake::Eventfd => self.efds[what]
                .write(1)
                .map_err(|e| Error::io("write", "eventfd", e))?,
            Wake::Spin => {}
        }
        Ok(())
    }

    /// Wait until `ready()` holds, for `what`. Bounded by [`RING_WAIT`].
    #[cold]
    pub(super) fn wait_for(&self, what: usize, ready: impl Fn(&Self) -> bool) -> Result<()> {
        if self.wake == Wake::Spin {
            // The clock is first read after 4096 turns: a reply that comes within
            // them (every round trip's, back to back) never waits behind a clock
            // read, and the wait stays bounded.
            let mut start = None;
            let mut i = 0u32;
            while !ready(self) {
                std::hint::spin_loop();
                i = i.wrapping_add(1);
                if i.is_multiple_of(4096) {
                    if self.dead() {
                        return Err(self.gone());
                    }
                    if start.get_or_insert_with(Instant::now).elapsed() > RING_WAIT {
                        return Err(self.stuck());
                    }
                }
            }
            return Ok(());
        }
        if self.wake == Wake::Adaptive {
            // Spin for the budget, then sleep. The clock is read every 64 turns,
            // the budget counted from the first read: an answer that comes within
            // 64 turns (back-to-back round trips') never waits behind a clock read.
            let mut t0 = None;
            let mut i = 0u32;
            while !ready(self) {
                std::hint::spin_loop();
                i = i.wrapping_add(1);
                if i.is_multiple_of(64) {
                    let now = ipcperf_sys::clock::now_ns();
                    if now.saturating_sub(*t0.get_or_insert(now)) > self.spin_ns {
                        break;
                    }
                }
            }
            if ready(self) {
                return Ok(());
            }
        }
        let mut start = Instant::now();
        let mut mark = ipcperf_sys::signal::continues_mark();
        let flag = self.mem.atomic_u32(OFF_WAITING[what]);
        let seq = self.mem.atomic_u32(OFF_SEQ[what]);
        loop {
            let s = seq.load(Ordering::SeqCst);
            flag.store(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if ready(self) {
                flag.store(0, Ordering::Relaxed);
                return Ok(());
            }
            match self.wake {
                Wake::Futex | Wake::Adaptive => {
                    futex::wait(seq, s, TICK)?;
                }
                Wake::Sem => {
                    self.sems[what].wait_timeout(TICK)?;
                }
                Wake::Eventfd => {
                    let e = &self.efds[what];
                    if ipcperf_sys::fd::wait_ready(e.as_fd(), false, TICK.as_millis() as i32)? {
                        let _ = e.read();
                    }
                }
                Wake::Spin => {}
            }
            if ready(self) {
                flag.store(0, Ordering::Relaxed);
                return Ok(());
            }
            if self.dead() {
                return Err(self.gone());
            }
            if start.elapsed() > RING_WAIT {
                // A stop (Ctrl-Z, `fg`) is not the other end's: wait again.
                if !ipcperf_sys::signal::continued_since(mark) {
                    return Err(self.stuck());
                }
                start = Instant::now();
                mark = ipcperf_sys::signal::continues();
            }
        }
    }

    #[cold]
    pub(super) fn gone(&self) -> Error {
        Error::Peer("the other end of the shm ring is gone (its process or thread ended)".into())
    }

    pub(super) fn stuck(&self) -> Error {
        Error::Timeout(format!(
            "the other end of the shm ring did not move within {} s",
            RING_WAIT.as_secs()
        ))
    }
}
