//! The machine's state when a run starts, as far as it can distort a figure: the
//! clocksource (every timed round trip reads it), the CPU frequency governor and
//! boost, SMT, CPUs kept from the scheduler (`isolcpus`, `nohz_full`), and how busy
//! the machine already is. Recorded with the run; [`MachineState::warnings`] says
//! what deserves a line in the output. Read from a root (`/`) so tests can use a
//! recorded tree.

use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MachineState {
    /// The current clocksource (`tsc` is the cheap one).
    pub clocksource: Option<String>,
    /// cpu0's frequency governor (absent without cpufreq, as in most VMs).
    pub governor: Option<String>,
    /// Frequency boost (turbo) on, where the kernel says.
    pub boost: Option<bool>,
    /// SMT control: `on`, `off`, `forceoff`, `notsupported`, `notimplemented`.
    pub smt: Option<String>,
    /// CPUs isolated from the scheduler, and tickless (`nohz_full`), as lists.
    pub isolated: Option<String>,
    pub nohz_full: Option<String>,
    /// The 1-minute load average when the run started, and the CPUs it may use.
    pub load_1m: Option<f64>,
    pub cpus: usize,
    /// Running there under a hypervisor.
    pub virtualized: bool,
    /// CPUs' worth of time that processes other than this run's used while it ran
    /// (the machine's busy time less ours and our peers', less the tick a CPU
    /// /proc/stat's counting may add: at least this much), set when the run ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_busy_cpus: Option<f64>,
    /// The CPUs' idle state: cpuidle driver, states, the latency request in
    /// force (absent in older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<crate::idle::IdleInfo>,
    /// The perf counters this run could not count, a line each, saying why
    /// (`ipcperf_sys::perfcount`): no PMU here, or not allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub perf_not_counted: Vec<String>,
    /// The CPU quota of this process's cgroup (a container's or pod's CPU
    /// limit), with the throttling during the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<crate::cgroup::CpuQuota>,
    /// The CPU times when the state was read (not kept: the run's end uses it).
    #[serde(skip)]
    pub started: Option<CpuSnapshot>,
}

/// Above this many CPUs' worth of other work during a run, it is flagged.
pub const BUSY_OTHERS: f64 = 0.25;

/// The machine's busy CPU time and ours, at one instant: two of them tell how
/// much of the machine others used in between.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuSnapshot {
    busy_ns: u64,
    own_ns: u64,
    wall_ns: u64,
    /// The CPUs /proc/stat counts: each counts whole ticks, so two readings'
    /// difference may be a tick off on each.
    cpus: u64,
}

/// /proc/stat's unit: USER_HZ is 100 on every Linux ABI.
const TICK_NS: u64 = 10_000_000;

/// Busy time of all CPUs (every /proc/stat field but idle and iowait), in ns,
/// and how many CPUs it is counted over.
fn machine_busy_ns(root: &Path) -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string(root.join("proc/stat")).ok()?;
    let cpus = stat
        .lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count() as u64;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest is within user).
    let busy: u64 = f
        .iter()
        .take(8)
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4)
        .map(|(_, v)| v)
        .sum();
    Some((busy * TICK_NS, cpus.max(1)))
}

impl CpuSnapshot {
    pub fn now() -> CpuSnapshot {
        let (busy_ns, cpus) = machine_busy_ns(Path::new("/")).unwrap_or((0, 1));
        CpuSnapshot {
            busy_ns,
            own_ns: ipcperf_sys::clock::process_cpu_ns() + ipcperf_sys::clock::children_cpu_ns(),
            wall_ns: ipcperf_sys::clock::now_ns(),
            cpus,
        }
    }

    /// CPUs' worth of others' work from `self` to `later`, at least: the
    /// machine's busy time less ours, less a tick a CPU, what /proc/stat's
    /// whole ticks may add (an idle machine read "1.28 CPUs" busy over a 14 ms
    /// run, three ticks where ours was one).
    pub fn others_busy(&self, later: &CpuSnapshot) -> Option<f64> {
        let wall = later.wall_ns.checked_sub(self.wall_ns)?.max(1);
        let busy = later.busy_ns.checked_sub(self.busy_ns)?;
        let own = later.own_ns.saturating_sub(self.own_ns);
        let slack = self.cpus.max(later.cpus) * TICK_NS;
        (self.busy_ns > 0)
            .then(|| busy.saturating_sub(own).saturating_sub(slack) as f64 / wall as f64)
    }
}

use crate::sysfs::read;

impl MachineState {
    /// Read the state under `root` (`/` on a live machine).
    pub fn read(root: &Path, cpus: usize, virtualized: bool) -> MachineState {
        let boost = read(root, "sys/devices/system/cpu/cpufreq/boost")
            .map(|b| b == "1")
            .or_else(|| {
                read(root, "sys/devices/system/cpu/intel_pstate/no_turbo").map(|b| b == "0")
            });
        MachineState {
            clocksource: read(
                root,
                "sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            governor: read(root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            boost,
            smt: read(root, "sys/devices/system/cpu/smt/control"),
            isolated: read(root, "sys/devices/system/cpu/isolated"),
            nohz_full: read(root, "sys/devices/system/cpu/nohz_full").filter(|s| s != "(null)"),
            load_1m: read(root, "proc/loadavg")
                .and_then(|l| l.split_whitespace().next().and_then(|x| x.parse().ok())),
            idle: Some(crate::idle::IdleInfo::read(
                root,
                &if root == Path::new("/") {
                    ipcperf_sys::cpu::allowed_cpus().unwrap_or_else(|_| (0..cpus).collect())
                } else {
                    (0..cpus).collect()
                },
            )),
            cpus,
            virtualized,
            others_busy_cpus: None,
            perf_not_counted: Vec::new(),
            cpu_quota: crate::cgroup::CpuQuota::read(root),
            started: None,
        }
    }

    /// This machine's, now.
    pub fn current(cpus: usize, virtualized: bool) -> MachineState {
        let mut s = MachineState::read(Path::new("/"), cpus, virtualized);
        s.started = Some(CpuSnapshot::now());
        if crate::counts::perf_wanted() {
            s.perf_not_counted = ipcperf_sys::perfcount::ThreadPerf::open().1;
        }
        s
    }

    /// One line per thing that can distort the figures of this run.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(c) = self.clocksource.as_deref().filter(|c| *c != "tsc") {
            w.push(format!(
                "the clocksource is {c}, not tsc: every clock read costs more (it is \
                 measured and taken off each round trip, but it adds noise)"
            ));
        }
        if let Some(g) = self.governor.as_deref().filter(|g| *g != "performance") {
            w.push(format!(
                "the CPU frequency governor is {g}: clocks change under load (the \
                 `performance` governor holds them)"
            ));
        }
        if self.boost == Some(true) {
            w.push("frequency boost (turbo) is on: figures depend on temperature and on how many cores are busy".into());
        }
        if let Some(l) = self.load_1m.filter(|&l| l > 0.5 * self.cpus.max(1) as f64) {
            w.push(format!(
                "the machine is busy: load average {l:.2} on {} CPU{} before the run",
                self.cpus,
                if self.cpus == 1 { "" } else { "s" }
            ));
        }
        if let Some(b) = self.others_busy_cpus.filter(|&b| b > BUSY_OTHERS) {
            w.push(format!(
                "other processes kept {b:.2} CPUs busy during the run: its figures shared \
                 the machine"
            ));
        }
        if let Some(q) = &self.cpu_quota {
            w.push(format!(
                "this process's cgroup ({}) may use {:.2} CPUs' time (a CPU quota, {} µs \
                 each {} µs): a side past its share waits for the next period, a stall \
                 the figures then hold",
                q.cgroup,
                q.cpus(),
                q.quota_us,
                q.period_us
            ));
        }
        if self.virtualized {
            w.push("this is a virtual machine: its CPUs are the host's threads, shared with other guests; compare figures only with runs on the same kind of machine".into());
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!(
            "ipcperf-state-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        for (p, c) in files {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, c).unwrap();
        }
        root
    }

    #[test]
    fn a_quiet_tuned_machine_has_nothing_to_say() {
        let root = tree(&[
            (
                "sys/devices/system/clocksource/clocksource0/current_clocksource",
                "tsc\n",
            ),
            (
                "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                "performance\n",
            ),
            ("sys/devices/system/cpu/cpufreq/boost", "0\n"),
            ("sys/devices/system/cpu/smt/control", "on\n"),
            ("sys/devices/system/cpu/nohz_full", "(null)\n"),
            ("proc/loadavg", "0.10 0.20 0.30 1/100 42\n"),
        ]);
        let s = MachineState::read(&root, 8, false);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(s.clocksource.as_deref(), Some("tsc"));
        assert_eq!(
            (s.boost, s.load_1m, s.nohz_full.as_deref()),
            (Some(false), Some(0.1), None)
        );
        assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    }

    #[test]
    fn what_distorts_is_said() {
        let root = tree(&[
            (
                "sys/devices/system/clocksource/clocksource0/current_clocksource",
                "hpet\n",
            ),
            (
                "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
                "powersave\n",
            ),
            ("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n"),
            ("proc/loadavg", "3.50 2.00 1.00 4/100 42\n"),
        ]);
        let mut s = MachineState::read(&root, 2, true);
        std::fs::remove_dir_all(&root).unwrap();
        s.others_busy_cpus = Some(0.8);
        let w = s.warnings().join("\n");
        for what in [
            "hpet",
            "powersave",
            "turbo",
            "load average 3.50 on 2 CPUs",
            "kept 0.80 CPUs busy",
            "virtual machine",
        ] {
            assert!(w.contains(what), "{what} missing from:\n{w}");
        }
    }

    #[test]
    fn busy_others_are_measured_from_two_snapshots() {
        let a = CpuSnapshot {
            busy_ns: 1_000_000_000,
            own_ns: 0,
            wall_ns: 0,
            cpus: 2,
        };
        // One second later: the machine was busy 1.5 CPU-seconds, we 1.0 of
        // them; two CPUs' ticks may have added 20 ms.
        let b = CpuSnapshot {
            busy_ns: 2_500_000_000,
            own_ns: 1_000_000_000,
            wall_ns: 1_000_000_000,
            cpus: 2,
        };
        assert_eq!(a.others_busy(&b), Some(0.48));
        assert_eq!(b.others_busy(&a), None, "time runs forward");
        // 14 ms later, three ticks busy where we were busy 10 ms: within what
        // two CPUs' whole ticks can add, so nobody else was seen.
        let c = CpuSnapshot {
            busy_ns: 1_030_000_000,
            own_ns: 10_000_000,
            wall_ns: 14_000_000,
            cpus: 2,
        };
        assert_eq!(a.others_busy(&c), Some(0.0));
        let live = CpuSnapshot::now();
        assert!(live.busy_ns > 0, "/proc/stat is read");
        // Every CPU /proc/stat counts, however few this process may use.
        assert!(
            live.cpus as usize >= ipcperf_sys::cpu::online_cpus(),
            "{live:?}"
        );
    }
}
