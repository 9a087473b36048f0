//! A watchdog for cases over mechanisms whose waits cannot be bounded
//! (a blocking msgrcv or mq_receive has no time-out): a thread that looks every
//! 50 ms whether the peer (process or thread) is still there and, once it is not, runs the
//! link's wake-up actions (remove the SysV queue, post a hang-up message) every
//! 10 ms until the session ends. It never touches the timed loop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// One wake-up action (see [`crate::mechanism::Link::on_peer_death`]).
pub type WakeUp = Box<dyn Fn() + Send>;

pub struct Watchdog {
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<()>>,
}

/// Whether process `pid` (our peer, a child) has ended (gone, or a zombie not
/// yet reaped).
fn ended(pid: u32) -> bool {
    !ipcperf_sys::names::child_running(pid as i32)
}

impl Watchdog {
    /// Watch process `pid`; None when there is nothing to do on its death.
    pub fn start(pid: u32, actions: Vec<WakeUp>) -> Option<Watchdog> {
        Watchdog::start_with(move || ended(pid), actions)
    }

    /// Watch a peer thread: it is gone once `done` is set.
    pub fn for_thread(done: Arc<AtomicBool>, actions: Vec<WakeUp>) -> Option<Watchdog> {
        Watchdog::start_with(move || done.load(Ordering::Acquire), actions)
    }

    /// Run `actions` (repeatedly, every 10 ms) once `dead()` says the peer is gone.
    pub fn start_with(
        dead: impl Fn() -> bool + Send + 'static,
        actions: Vec<WakeUp>,
    ) -> Option<Watchdog> {
        if actions.is_empty() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let join = std::thread::Builder::new()
            .name("ipcperf-wakeup".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    if dead() {
                        while !s.load(Ordering::Relaxed) {
                            for a in &actions {
                                a();
                            }
                            std::thread::park_timeout(Duration::from_millis(10));
                        }
                        return;
                    }
                    // Parked, not asleep: dropping the watchdog wakes it at
                    // once (a sleep kept every session's close up to 50 ms,
                    // which a set-up-timed series counted).
                    std::thread::park_timeout(Duration::from_millis(50));
                }
            })
            .ok()?;
        Some(Watchdog {
            stop,
            join: Some(join),
        })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(j) = self.join.take() {
            j.thread().unpark();
            let _ = j.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    fn counter() -> (Arc<AtomicU32>, Vec<WakeUp>) {
        let n = Arc::new(AtomicU32::new(0));
        let n2 = n.clone();
        let a: WakeUp = Box::new(move || {
            n2.fetch_add(1, Ordering::Relaxed);
        });
        (n, vec![a])
    }

    fn wait_for(n: &AtomicU32) -> bool {
        let t0 = std::time::Instant::now();
        while t0.elapsed() < Duration::from_secs(2) {
            if n.load(Ordering::Relaxed) > 0 {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    #[test]
    fn wakes_when_the_peer_thread_ends_and_not_before() {
        let done = Arc::new(AtomicBool::new(false));
        let (n, actions) = counter();
        let w = Watchdog::for_thread(done.clone(), actions).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(n.load(Ordering::Relaxed), 0, "fired while the peer lived");
        done.store(true, Ordering::Release);
        assert!(wait_for(&n));
        drop(w);
    }

    /// Dropping a watchdog does not wait out its poll: a session's close is
    /// timed where the set-up is (`--include-setup`, `pipeline`), and a 50 ms
    /// sleep there put steps of 50 ms into those figures. The quickest of five
    /// drops (the scheduler may be slow to run a thread once; not five times).
    #[test]
    fn a_drop_ends_the_watch_at_once() {
        let took = (0..5)
            .map(|_| {
                let (_, actions) = counter();
                let w = Watchdog::for_thread(Arc::new(AtomicBool::new(false)), actions).unwrap();
                std::thread::sleep(Duration::from_millis(5));
                let t0 = std::time::Instant::now();
                drop(w);
                t0.elapsed()
            })
            .min()
            .unwrap();
        assert!(took < Duration::from_millis(25), "{took:?}");
    }

    #[test]
    fn wakes_when_the_peer_process_is_killed() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let (n, actions) = counter();
        let w = Watchdog::start(child.id(), actions).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(n.load(Ordering::Relaxed), 0);
        child.kill().unwrap();
        // Not reaped yet: a zombie counts as ended.
        assert!(wait_for(&n));
        drop(w);
        child.wait().unwrap();
    }
}
