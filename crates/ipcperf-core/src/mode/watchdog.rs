//! A watchdog for two-process cases over mechanisms whose waits cannot be bounded
//! (a blocking msgrcv or mq_receive has no time-out): a thread that looks every
//! 50 ms whether the peer process is still alive and, once it is not, runs the
//! link's wake-up actions (remove the SysV queue, post a hang-up message) every
//! 10 ms until the session ends. It never touches the timed loop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Watchdog {
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<()>>,
}

/// Whether process `pid` has ended (gone, or a zombie not yet reaped).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_none_or(|st| st == "Z" || st == "X"),
        Err(_) => true,
    }
}

impl Watchdog {
    /// Watch `pid`; None when there is nothing to do on its death.
    pub fn start(pid: u32, actions: Vec<Box<dyn Fn() + Send>>) -> Option<Watchdog> {
        if actions.is_empty() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let join = std::thread::Builder::new()
            .name("ipcperf-wakeup".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    if ended(pid) {
                        while !s.load(Ordering::Relaxed) {
                            for a in &actions {
                                a();
                            }
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
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
            let _ = j.join();
        }
    }
}
