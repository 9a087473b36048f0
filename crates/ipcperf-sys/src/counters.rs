//! What the calling thread has cost the machine so far, from the kernel's own
//! accounting, readable by any user (no perf rights, any `perf_event_paranoid`):
//! its CPU time (`CLOCK_THREAD_CPUTIME_ID`), its context switches, voluntary (it
//! blocked) and involuntary (it was preempted), and its page faults
//! (`getrusage(RUSAGE_THREAD)`), and its migrations between CPUs
//! (`se.nr_migrations` of `/proc/thread-self/sched`, where the kernel has it).
//!
//! Read once before and once after a timed window, never inside it: a reading
//! makes two system calls and reads one small file.

use nix::sys::resource::{getrusage, UsageWho};

/// One reading, or the difference of two (`since`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadCounters {
    /// CPU time, user and system, in nanoseconds.
    pub cpu_ns: u64,
    /// Context switches the thread asked for (it blocked: a read with nothing
    /// to read, a wait).
    pub voluntary_switches: u64,
    /// Context switches forced on it (preempted, its time slice over).
    pub involuntary_switches: u64,
    /// Page faults served without I/O.
    pub minor_faults: u64,
    /// Page faults that needed I/O.
    pub major_faults: u64,
    /// Moves from one CPU to another; None where the kernel keeps no
    /// `/proc/thread-self/sched` (built without CONFIG_SCHED_DEBUG).
    pub migrations: Option<u64>,
}

impl ThreadCounters {
    /// The calling thread's counters now. A call the kernel refuses reads 0
    /// (getrusage of the calling thread cannot fail on Linux).
    pub fn now() -> Self {
        let (voluntary_switches, involuntary_switches, minor_faults, major_faults) =
            match getrusage(UsageWho::RUSAGE_THREAD) {
                Ok(u) => (
                    u.voluntary_context_switches() as u64,
                    u.involuntary_context_switches() as u64,
                    u.minor_page_faults() as u64,
                    u.major_page_faults() as u64,
                ),
                Err(_) => (0, 0, 0, 0),
            };
        ThreadCounters {
            cpu_ns: crate::clock::thread_cpu_ns(),
            voluntary_switches,
            involuntary_switches,
            minor_faults,
            major_faults,
            migrations: migrations(),
        }
    }

    /// What was counted between `earlier` and this reading (of the same thread).
    pub fn since(&self, earlier: &ThreadCounters) -> ThreadCounters {
        ThreadCounters {
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
            voluntary_switches: self
                .voluntary_switches
                .saturating_sub(earlier.voluntary_switches),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            migrations: match (self.migrations, earlier.migrations) {
                (Some(a), Some(b)) => Some(a.saturating_sub(b)),
                _ => None,
            },
        }
    }

    /// Both kinds of context switch.
    pub fn switches(&self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
    }
}

/// The calling thread's migrations so far, from the scheduler's own count.
fn migrations() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
    parse_migrations(&text)
}

/// `se.nr_migrations` of a `/proc/*/sched` text.
fn parse_migrations(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "se.nr_migrations")
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocking_wait_is_a_voluntary_switch_and_cpu_work_is_cpu_time() {
        let a = ThreadCounters::now();
        // Ten sleeps: each blocks, so each is at least one voluntary switch.
        for _ in 0..10 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let d = ThreadCounters::now().since(&a);
        assert!(d.voluntary_switches >= 10, "{d:?}");
        assert!(d.cpu_ns > 0, "{d:?}");
        assert_eq!(d.switches(), d.voluntary_switches + d.involuntary_switches);
    }

    #[test]
    fn another_threads_switches_are_not_ours() {
        let a = ThreadCounters::now();
        std::thread::spawn(|| {
            for _ in 0..20 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        })
        .join()
        .unwrap();
        let d = ThreadCounters::now().since(&a);
        // Our join blocks once or a few times, never once per sleep of the other.
        assert!(d.voluntary_switches < 20, "{d:?}");
    }

    #[test]
    fn migrations_are_read_from_the_sched_text() {
        let text = "a (1, #threads: 1)\n---\nse.exec_start  :  1.0\nse.nr_migrations                             :                    7\nnr_switches : 9\n";
        assert_eq!(parse_migrations(text), Some(7));
        assert_eq!(parse_migrations("nr_switches : 9\n"), None);
        assert_eq!(parse_migrations("se.nr_migrations : x\n"), None);
    }
}
