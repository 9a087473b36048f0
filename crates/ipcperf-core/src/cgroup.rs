//! The CPU quota of this process's cgroup (a container's `--cpus`, a pod's CPU
//! limit): past its share in a period the cgroup's threads wait for the next
//! one, a stall of up to a period (100 ms by default) that a figure then holds.
//! Read from cgroup v2 (`cpu.max`, `cpu.stat`'s `throttled_usec`) or v1
//! (`cpu.cfs_quota_us`, `cpu.stat`'s `throttled_time`), for this cgroup and
//! every one above it (the tightest limit binds). Read under a root (`/` on a
//! live machine) so tests can use a recorded tree.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::sysfs::read;

/// The tightest CPU quota over this process's cgroup and those above it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuQuota {
    /// The cgroup that sets it, as /proc/self/cgroup names it.
    pub cgroup: String,
    /// CPU time a period allows, in µs, and the period.
    pub quota_us: u64,
    pub period_us: u64,
    /// Periods in which it was throttled during the run, and the time its
    /// threads waited, in ms (set when the run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_periods: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_ms: Option<f64>,
    /// Where its counters are and what they said when the run began (not kept).
    #[serde(skip)]
    pub(crate) stat: Option<(std::path::PathBuf, Throttled)>,
}

/// A cgroup's throttling counters at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Throttled {
    periods: u64,
    ns: u64,
}

impl CpuQuota {
    /// The quota in CPUs (0.5: half of one CPU's time).
    pub fn cpus(&self) -> f64 {
        self.quota_us as f64 / self.period_us.max(1) as f64
    }

    /// The tightest quota over this process's cgroups under `root`, if any.
    pub fn read(root: &Path) -> Option<CpuQuota> {
        let own = read(root, "proc/self/cgroup")?;
        let mut best: Option<CpuQuota> = None;
        for line in own.lines() {
            let mut f = line.splitn(3, ':');
            let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
            let v2 = controllers.is_empty();
            if !v2 && !controllers.split(',').any(|c| c == "cpu") {
                continue;
            }
            let mounts: &[&str] = if v2 {
                &["sys/fs/cgroup", "sys/fs/cgroup/unified"]
            } else {
                &["sys/fs/cgroup/cpu", "sys/fs/cgroup/cpu,cpuacct"]
            };
            // This cgroup, then each one above it, up to the mount's root ("").
            let path = path.trim_end_matches('/');
            let prefixes =
                std::iter::once(path).chain(path.rmatch_indices('/').map(|(i, _)| &path[..i]));
            for p in prefixes {
                for m in mounts {
                    let dir = format!("{m}{p}");
                    let Some((quota_us, period_us)) = quota(root, &dir, v2) else {
                        continue;
                    };
                    let q = CpuQuota {
                        cgroup: if p.is_empty() {
                            "/".into()
                        } else {
                            p.to_string()
                        },
                        quota_us,
                        period_us,
                        throttled_periods: None,
                        throttled_ms: None,
                        stat: throttled(root, &dir, v2).map(|t| (root.join(&dir), t)),
                    };
                    if best.as_ref().is_none_or(|b| q.cpus() < b.cpus()) {
                        best = Some(q);
                    }
                }
            }
        }
        best
    }

    /// Set the throttling since [`CpuQuota::read`] (the run's end).
    pub fn finish(&mut self) {
        let Some((dir, start)) = &self.stat else {
            return;
        };
        let v2 = dir.join("cpu.max").exists();
        let now = std::fs::read_to_string(dir.join("cpu.stat"))
            .ok()
            .and_then(|s| parse_stat(&s, v2));
        if let Some(now) = now {
            self.throttled_periods = Some(now.periods.saturating_sub(start.periods));
            self.throttled_ms = Some(now.ns.saturating_sub(start.ns) as f64 / 1e6);
        }
    }
}

/// A cgroup directory's quota and period in µs, where it sets one.
fn quota(root: &Path, dir: &str, v2: bool) -> Option<(u64, u64)> {
    if v2 {
        let max = read(root, &format!("{dir}/cpu.max"))?;
        let mut f = max.split_whitespace();
        let q = f.next()?.parse().ok()?; // "max": no quota
        let p = f.next().and_then(|p| p.parse().ok()).unwrap_or(100_000);
        Some((q, p))
    } else {
        let q: i64 = read(root, &format!("{dir}/cpu.cfs_quota_us"))?
            .parse()
            .ok()?;
        let p: u64 = read(root, &format!("{dir}/cpu.cfs_period_us"))?
            .parse()
            .ok()?;
        (q > 0).then_some((q as u64, p))
    }
}

fn throttled(root: &Path, dir: &str, v2: bool) -> Option<Throttled> {
    parse_stat(&read(root, &format!("{dir}/cpu.stat"))?, v2)
}

/// `nr_throttled` and the time throttled (v2 `throttled_usec`, v1
/// `throttled_time` in ns) from a `cpu.stat`.
fn parse_stat(s: &str, v2: bool) -> Option<Throttled> {
    let field = |name: &str| {
        s.lines().find_map(|l| {
            l.strip_prefix(name)?
                .strip_prefix(' ')?
                .trim()
                .parse::<u64>()
                .ok()
        })
    };
    Some(Throttled {
        periods: field("nr_throttled")?,
        ns: if v2 {
            field("throttled_usec")? * 1000
        } else {
            field("throttled_time")?
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(tag: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
        let root =
            std::env::temp_dir().join(format!("ipcperf-cgroup-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (p, c) in files {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, c).unwrap();
        }
        root
    }

    /// v2: the tightest of the pod's and its container's limits; throttling
    /// counted from the start.
    #[test]
    fn v2_takes_the_tightest_limit_above() {
        let root = tree(
            "v2",
            &[
                ("proc/self/cgroup", "0::/kubepods/pod1/c1\n"),
                ("sys/fs/cgroup/cpu.stat", "usage_usec 1\n"),
                ("sys/fs/cgroup/kubepods/cpu.max", "max 100000\n"),
                ("sys/fs/cgroup/kubepods/pod1/cpu.max", "50000 100000\n"),
                (
                    "sys/fs/cgroup/kubepods/pod1/cpu.stat",
                    "usage_usec 9\nnr_periods 40\nnr_throttled 3\nthrottled_usec 2000\n",
                ),
                ("sys/fs/cgroup/kubepods/pod1/c1/cpu.max", "200000 100000\n"),
            ],
        );
        let mut q = CpuQuota::read(&root).unwrap();
        assert_eq!(
            (q.cgroup.as_str(), q.quota_us, q.period_us),
            ("/kubepods/pod1", 50_000, 100_000)
        );
        assert_eq!(q.cpus(), 0.5);
        std::fs::write(
            root.join("sys/fs/cgroup/kubepods/pod1/cpu.stat"),
            "nr_throttled 10\nthrottled_usec 72000\n",
        )
        .unwrap();
        q.finish();
        assert_eq!((q.throttled_periods, q.throttled_ms), (Some(7), Some(70.0)));
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// v1: cfs_quota_us -1 is no limit; a quota is read with its period.
    #[test]
    fn v1_reads_cfs_quota_and_none_means_none() {
        let root = tree(
            "v1",
            &[
                (
                    "proc/self/cgroup",
                    "4:memory:/x\n2:cpu,cpuacct:/box\n0::/\n",
                ),
                ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n"),
                ("sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n"),
                (
                    "sys/fs/cgroup/cpu,cpuacct/cpu.stat",
                    "nr_throttled 0\nthrottled_time 0\n",
                ),
                ("sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_quota_us", "150000\n"),
                (
                    "sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_period_us",
                    "100000\n",
                ),
                (
                    "sys/fs/cgroup/cpu,cpuacct/box/cpu.stat",
                    "nr_periods 5\nnr_throttled 1\nthrottled_time 5000000\n",
                ),
            ],
        );
        let q = CpuQuota::read(&root).unwrap();
        assert_eq!((q.cgroup.as_str(), q.cpus()), ("/box", 1.5));
        std::fs::write(
            root.join("sys/fs/cgroup/cpu,cpuacct/box/cpu.cfs_quota_us"),
            "-1\n",
        )
        .unwrap();
        assert_eq!(CpuQuota::read(&root), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
