//! Whether the other side is still there, for the owner's waits while it opens
//! its end: an accept, a FIFO writer's open, a library's handshake wait for
//! the peer to arrive, bounded at [`super::OPEN_TIMEOUT_MS`]. A peer that fails
//! or dies before it arrives would otherwise be heard of only when that bound
//! runs out (5 s a case); with the peer watched, such a wait ends within a slice
//! of its death, and the peer's own account of what went wrong follows.
//!
//! The starter of the peer (`mode::start`) installs how to tell it lives (its
//! process, its thread, or for one on another machine the control connection)
//! for the duration of the owner's open, on the owner's thread; the waits here
//! look at it between slices. With nothing installed (single mode, the peer's
//! own opens) nobody is watched and the waits are as bounded as before.

use std::cell::RefCell;
use std::os::fd::BorrowedFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// True while the other side lives.
pub type Alive = Arc<dyn Fn() -> bool + Send + Sync>;

/// How often a watched wait looks whether the other side still lives.
pub const SLICE_MS: i32 = 20;

thread_local! {
    static WATCHED: RefCell<Option<Alive>> = const { RefCell::new(None) };
}

/// Run `f` with `alive` watched by this thread's waits (the one before is back after).
pub fn watching<T>(alive: Option<Alive>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Alive>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            WATCHED.with(|w| *w.borrow_mut() = before);
        }
    }
    let before = WATCHED.with(|w| std::mem::replace(&mut *w.borrow_mut(), alive));
    let _restore = Restore(before);
    f()
}

/// The watch this thread's waits look at, to carry into a wait run elsewhere
/// (an async runtime's future).
pub fn watched() -> Option<Alive> {
    WATCHED.with(|w| w.borrow().clone())
}

/// Whether the watched other side is gone (false where nobody is watched).
pub fn gone() -> bool {
    watched().is_some_and(|alive| !alive())
}

/// The error of a wait the other side's end ended: what it was waiting for.
pub fn gone_error(what: &str) -> Error {
    Error::Peer(format!("the other side ended before {what}"))
}

/// Wait in slices for `poll` (handed each slice's milliseconds) to yield,
/// for at most `timeout_ms`: None when it did not; an error once the other side
/// is gone. `poll` returning an error ends the wait with it.
pub fn wait_for<T>(
    timeout_ms: i32,
    what: &str,
    mut poll: impl FnMut(i32) -> Result<Option<T>>,
) -> Result<Option<T>> {
    let deadline = Instant::now() + Duration::from_millis(timeout_ms.max(0) as u64);
    loop {
        // Rounded up: the last slice waits out the bound, never ends short of it.
        let left = deadline
            .saturating_duration_since(Instant::now())
            .as_micros()
            .div_ceil(1000) as i32;
        let slice = if watched().is_some() {
            left.min(SLICE_MS)
        } else {
            left
        };
        if let Some(v) = poll(slice)? {
            return Ok(Some(v));
        }
        if gone() {
            return Err(gone_error(what));
        }
        if left <= slice {
            return Ok(None);
        }
    }
}

/// Wait until `fd` is ready (readable, or writable with `write`) for at most
/// `timeout_ms`: Ok(false) when it is not; an error once the other side is gone.
pub fn wait_ready(fd: BorrowedFd<'_>, write: bool, timeout_ms: i32, what: &str) -> Result<bool> {
    let ready = wait_for(timeout_ms, what, |ms| {
        Ok(ipcperf_sys::fd::wait_ready(fd, write, ms)?.then_some(()))
    })?;
    Ok(ready.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_wait_ends_soon_after_the_other_side_does() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let live = Arc::new(AtomicBool::new(true));
        let l = live.clone();
        let alive: Alive = Arc::new(move || l.load(Ordering::Acquire));
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            live.store(false, Ordering::Release);
        });
        let t0 = Instant::now();
        let r = watching(Some(alive), || {
            wait_ready(a.as_fd(), false, 5_000, "it spoke")
        });
        t.join().unwrap();
        let e = r.unwrap_err().to_string();
        assert!(e.contains("the other side ended before it spoke"), "{e}");
        assert!(
            t0.elapsed() < Duration::from_millis(1_000),
            "{:?}",
            t0.elapsed()
        );
        assert!(
            t0.elapsed() >= Duration::from_millis(100),
            "{:?}",
            t0.elapsed()
        );
        // The watch is gone with `watching`: the same wait now runs to its bound.
        assert!(watched().is_none());
        assert!(!wait_ready(a.as_fd(), false, 30, "it spoke").unwrap());
    }

    #[test]
    fn a_wait_still_sees_its_descriptor_and_its_bound() {
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let alive: Alive = Arc::new(|| true);
        let t0 = Instant::now();
        let r = watching(Some(alive.clone()), || {
            wait_ready(a.as_fd(), false, 70, "x")
        });
        assert!(!r.unwrap());
        assert!(
            t0.elapsed() >= Duration::from_millis(70),
            "{:?}",
            t0.elapsed()
        );
        std::io::Write::write_all(&mut b, b"!").unwrap();
        assert!(watching(Some(alive), || wait_ready(a.as_fd(), false, 5_000, "x")).unwrap());
    }
}
