//! CPU placement: pin the calling thread, ask where it runs, count the CPUs.

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;

use crate::error::{Context, SysResult};

/// Pin the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> SysResult<()> {
    let mut set = CpuSet::new();
    set.set(cpu).ctx("CpuSet::set", &format!("cpu {cpu}"))?;
    sched_setaffinity(Pid::from_raw(0), &set).ctx("sched_setaffinity", &format!("cpu {cpu}"))
}

/// The CPU the calling thread runs on now (None when the kernel will not say).
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only reads per-thread kernel state.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// CPUs this process may run on: its affinity mask. Not
/// `available_parallelism`, which also folds in a cgroup's CPU quota (half a
/// CPU's quota on a 2-CPU machine gives 1): the quota is a rate, not a place
/// to run, and is kept as its own figure.
pub fn online_cpus() -> usize {
    allowed_cpus()
        .ok()
        .map(|v| v.len())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
}

/// The CPUs the calling thread may run on: its affinity mask, which a cgroup
/// cpuset narrows.
pub fn allowed_cpus() -> SysResult<Vec<usize>> {
    let set =
        nix::sched::sched_getaffinity(Pid::from_raw(0)).ctx("sched_getaffinity", &"this thread")?;
    Ok((0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect())
}

/// Pins the calling thread to one CPU and restores its former affinity on drop.
pub struct PinGuard {
    saved: Option<CpuSet>,
}

impl PinGuard {
    /// Pin to `cpu` if given; a guard with nothing to restore otherwise.
    pub fn pin(cpu: Option<usize>) -> SysResult<PinGuard> {
        let Some(cpu) = cpu else {
            return Ok(PinGuard { saved: None });
        };
        let saved = nix::sched::sched_getaffinity(Pid::from_raw(0))
            .ctx("sched_getaffinity", &"this thread")?;
        pin_current_thread(cpu)?;
        Ok(PinGuard { saved: Some(saved) })
    }
}

impl Drop for PinGuard {
    fn drop(&mut self) {
        if let Some(s) = &self.saved {
            let _ = sched_setaffinity(Pid::from_raw(0), s);
        }
    }
}
