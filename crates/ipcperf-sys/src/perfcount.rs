//! Counting, not sampling: `perf_event_open(2)` counters of the calling thread,
//! each set read as one group (one `read`) before and after a series. Two sets:
//!
//! - the kernel's software events with the kernel's share counted (context
//!   switches, CPU migrations, page faults, task clock): at
//!   `perf_event_paranoid` 2 (most distributions) an unprivileged thread may
//!   count user space only, where `context-switches:u` reads 0, so this set is
//!   opened only where the kernel's share may be counted (root, CAP_PERFMON, or
//!   paranoid 1 or less);
//! - the processor's cycles, instructions, last-level cache references and
//!   misses, where it exposes them (bare metal, a guest given a virtual PMU):
//!   the kernel's share included where allowed, else user space only, and
//!   said so.
//!
//! Where a set cannot be opened, [`ThreadPerf::open`] says why in one line and
//! the caller's figures stand without it. A per-thread counter costs the kernel
//! work at each of the thread's context switches (its counters saved and
//! restored): `bench/counters.sh` measures that cost.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::Errno;
use crate::trace::Attr;

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
const FORMAT_GROUP: u64 = 1 << 3;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// One counter: the name it is kept under, its perf type and config.
type Event = (&'static str, u32, u64);

/// The processor's counters (PERF_COUNT_HW_*).
pub const HARDWARE: [Event; 4] = [
    ("cycles", PERF_TYPE_HARDWARE, 0),
    ("instructions", PERF_TYPE_HARDWARE, 1),
    ("llc_references", PERF_TYPE_HARDWARE, 2),
    ("llc_misses", PERF_TYPE_HARDWARE, 3),
];

/// The kernel's software events (PERF_COUNT_SW_*), the kernel's share counted.
pub const SOFTWARE: [Event; 4] = [
    ("context_switches", PERF_TYPE_SOFTWARE, 3),
    ("cpu_migrations", PERF_TYPE_SOFTWARE, 4),
    ("page_faults", PERF_TYPE_SOFTWARE, 2),
    ("task_clock_ns", PERF_TYPE_SOFTWARE, 1),
];

/// One group of counters of the calling thread, open and counting.
#[derive(Debug)]
struct Group {
    leader: OwnedFd,
    _members: Vec<OwnedFd>,
    names: Vec<&'static str>,
}

/// The perf counters open for the calling thread (one group per set).
#[derive(Debug, Default)]
pub struct ThreadPerf {
    groups: Vec<Group>,
    /// The processor's counters count user space only (the kernel's share was
    /// not allowed).
    pub user_only: bool,
}

/// A reading: each counter's name and count so far.
pub type Reading = Vec<(&'static str, u64)>;

/// perf_event_open for the calling thread (pid 0, any CPU), in `group` (-1:
/// a leader).
fn open_counter(e: &Event, kernel: bool, group: i32) -> Result<OwnedFd, Errno> {
    let attr = Attr {
        type_: e.1,
        size: std::mem::size_of::<Attr>() as u32,
        config: e.2,
        read_format: FORMAT_GROUP,
        flags: FLAG_EXCLUDE_HV | if kernel { 0 } else { FLAG_EXCLUDE_KERNEL },
        ..Attr::default()
    };
    // SAFETY: attr is a valid perf_event_attr of the size it states; pid 0
    // with CPU -1 counts the calling thread wherever it runs; group_fd is -1
    // or a leader this thread opened and still holds.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            0 as libc::pid_t,
            -1 as libc::c_int,
            group as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: a descriptor the kernel just returned, owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// One set as a group, each counter in it (the first the leader).
fn open_group(events: &[Event], kernel: bool) -> Result<Group, Errno> {
    let leader = open_counter(&events[0], kernel, -1)?;
    let mut members = Vec::new();
    for e in &events[1..] {
        members.push(open_counter(e, kernel, leader.as_raw_fd())?);
    }
    Ok(Group {
        leader,
        _members: members,
        names: events.iter().map(|e| e.0).collect(),
    })
}

/// Why a set could not be opened, in words.
fn why(e: Errno) -> String {
    match e {
        Errno::ENOENT | Errno::EOPNOTSUPP | Errno::ENODEV => {
            "the processor exposes no such counter here (no PMU: a VM without one)".into()
        }
        Errno::EACCES | Errno::EPERM => "not allowed (perf_event_paranoid; root or \
                                         CAP_PERFMON counts them)"
            .into(),
        e => format!("perf_event_open: {e}"),
    }
}

impl ThreadPerf {
    /// Open every set this thread may count; a line for each set that could
    /// not be opened, saying why.
    pub fn open() -> (ThreadPerf, Vec<String>) {
        let mut perf = ThreadPerf::default();
        let mut lines = Vec::new();
        match open_group(&SOFTWARE, true) {
            Ok(g) => perf.groups.push(g),
            Err(e) => lines.push(format!(
                "context switches, migrations, faults by perf: not counted, {} (the kernel's own \
                 accounting stands)",
                why(e)
            )),
        }
        match open_group(&HARDWARE, true).or_else(|e| match e {
            Errno::EACCES | Errno::EPERM => {
                perf.user_only = true;
                open_group(&HARDWARE, false)
            }
            e => Err(e),
        }) {
            Ok(g) => perf.groups.push(g),
            Err(e) => lines.push(format!(
                "cycles, instructions, cache misses: not counted, {}",
                why(e)
            )),
        }
        (perf, lines)
    }

    /// Whether any set is open.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Every open counter's count so far (a group read each: one system call).
    pub fn read(&self) -> Reading {
        let mut out = Vec::new();
        for g in &self.groups {
            let mut buf = [0u8; 8 * 9];
            // SAFETY: reads at most buf.len() bytes into buf, which outlives
            // the call; the descriptor is the group's open leader.
            let n = unsafe {
                libc::read(
                    g.leader.as_raw_fd(),
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                )
            };
            if n <= 0 {
                continue;
            }
            if let Some(values) = parse_group(&buf[..n as usize]) {
                out.extend(g.names.iter().copied().zip(values));
            }
        }
        out
    }
}

/// What was counted between two readings of the same counters.
pub fn since(now: &Reading, before: &Reading) -> Reading {
    now.iter()
        .filter_map(|(name, v)| {
            let b = before.iter().find(|(n, _)| n == name)?.1;
            Some((*name, v.saturating_sub(b)))
        })
        .collect()
}

/// A group read (PERF_FORMAT_GROUP without times or ids): the count of values,
/// then each value, native-endian u64s.
fn parse_group(buf: &[u8]) -> Option<Vec<u64>> {
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_ne_bytes(
            buf.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let nr = word(0)? as usize;
    (1..=nr).map(word).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The group layout the kernel writes, as a fixture: this VM has no PMU,
    /// so the hardware set's reading is tested on its bytes.
    #[test]
    fn a_group_read_is_its_count_then_its_values() {
        let mut buf = Vec::new();
        for w in [4u64, 1_000_000, 2_500_000, 40_000, 1_200] {
            buf.extend_from_slice(&w.to_ne_bytes());
        }
        assert_eq!(
            parse_group(&buf),
            Some(vec![1_000_000, 2_500_000, 40_000, 1_200])
        );
        // Cut short: no reading rather than a wrong one.
        assert_eq!(parse_group(&buf[..20]), None);
        assert_eq!(parse_group(&[]), None);
    }

    #[test]
    fn a_difference_pairs_counters_by_name() {
        let before = vec![("cycles", 100), ("instructions", 50)];
        let now = vec![("cycles", 350), ("instructions", 40), ("llc_misses", 3)];
        // A counter that went back reads 0; one absent before is left out.
        assert_eq!(
            since(&now, &before),
            vec![("cycles", 250), ("instructions", 0)]
        );
    }

    #[test]
    fn what_cannot_be_opened_is_said_and_what_can_counts() {
        let (perf, lines) = ThreadPerf::open();
        // Every set is open or has its line: never both, never neither.
        assert_eq!(perf.groups.len() + lines.len(), 2, "{lines:?}");
        for l in &lines {
            assert!(l.contains("not counted"), "{l}");
        }
        let a = perf.read();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let d = since(&perf.read(), &a);
        if let Some((_, n)) = d.iter().find(|(n, _)| *n == "context_switches") {
            // A sleep blocks: at least one switch, counted in the kernel.
            assert!(*n >= 1, "{d:?}");
        }
    }
}
