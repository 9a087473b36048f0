//! Where CPUs sit relative to one another, read from sysfs: packages (sockets),
//! NUMA nodes, cores and their SMT siblings, and the CPUs each cache is shared by
//! (`/sys/devices/system/cpu/cpu*/topology`, `cache/index*`,
//! `/sys/devices/system/node/node*/cpulist`). Only online CPUs this process may
//! use (its affinity mask, which a cgroup cpuset narrows) are offered for pinning.
//!
//! A pair of CPUs falls in exactly one [`PlacementClass`], the closest relation
//! they have: the same CPU, SMT siblings, a shared L2, different packages,
//! different NUMA nodes of one package (even where the package's L3 is reported
//! whole, as under sub-NUMA clustering), a shared L3, or the same node with
//! different last-level caches. Pure functions of a sysfs root, so they are tested on
//! recorded trees.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The relation between the two CPUs a case's sides run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementClass {
    /// Both sides on one CPU.
    SameCpu,
    /// Two hardware threads of one core.
    SmtSibling,
    /// Two cores sharing an L2 cache (a cluster).
    SharedL2,
    /// Two cores sharing the last-level (L3) cache.
    SharedL3,
    /// One NUMA node, different last-level caches (AMD CCX/CCD).
    OtherL3,
    /// Different NUMA nodes of one package (sub-NUMA clusters).
    OtherNuma,
    /// Different packages (sockets).
    OtherSocket,
    /// Different machines (`--peer`): not a class of one machine's topology, so
    /// not in [`PlacementClass::ALL`].
    OtherHost,
}

impl PlacementClass {
    /// From the closest relation to the farthest.
    pub const ALL: [PlacementClass; 7] = [
        PlacementClass::SameCpu,
        PlacementClass::SmtSibling,
        PlacementClass::SharedL2,
        PlacementClass::SharedL3,
        PlacementClass::OtherL3,
        PlacementClass::OtherNuma,
        PlacementClass::OtherSocket,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PlacementClass::SameCpu => "same-cpu",
            PlacementClass::SmtSibling => "smt-sibling",
            PlacementClass::SharedL2 => "shared-l2",
            PlacementClass::SharedL3 => "shared-l3",
            PlacementClass::OtherL3 => "other-l3",
            PlacementClass::OtherNuma => "other-numa",
            PlacementClass::OtherSocket => "other-socket",
            PlacementClass::OtherHost => "other-host",
        }
    }

    pub fn from_name(s: &str) -> Option<PlacementClass> {
        PlacementClass::ALL.into_iter().find(|c| c.name() == s)
    }

    /// What it means, for `ipcperf topology` and refusals.
    pub fn describe(self) -> &'static str {
        match self {
            PlacementClass::SameCpu => "both sides on one CPU",
            PlacementClass::SmtSibling => "two hardware threads of one core",
            PlacementClass::SharedL2 => "two cores sharing an L2 cache",
            PlacementClass::SharedL3 => "two cores sharing the last-level cache",
            PlacementClass::OtherL3 => "one NUMA node, different last-level caches",
            PlacementClass::OtherNuma => "different NUMA nodes of one package (L3 may be shared)",
            PlacementClass::OtherSocket => "different packages (sockets)",
            PlacementClass::OtherHost => "different machines (--peer)",
        }
    }
}

/// One usable CPU and where it sits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuPlace {
    pub cpu: usize,
    pub package: i64,
    pub die: i64,
    pub core: i64,
    pub node: Option<usize>,
    /// The hardware threads of its core, itself included.
    pub smt_siblings: Vec<usize>,
    /// The CPUs its L2 and its L3 (last-level) cache are shared by; None when sysfs
    /// does not say.
    pub l2: Option<Vec<usize>>,
    pub l3: Option<Vec<usize>>,
}

/// The machine's topology as far as this process can use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// Online CPUs this process may run on, by number.
    pub cpus: Vec<CpuPlace>,
    /// CPUs that exist but are offline.
    #[serde(default)]
    pub offline: Vec<usize>,
    /// Online CPUs outside this process's affinity mask (or cgroup cpuset).
    #[serde(default)]
    pub not_allowed: Vec<usize>,
    /// CPUs the kernel keeps from the scheduler (`isolcpus`).
    #[serde(default)]
    pub isolated: Vec<usize>,
}

/// Parse a kernel CPU list: `0-3,8,10-11` (and `0-7:2`, a stride). Empty: none.
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let (range, stride) = match part.split_once(':') {
            Some((r, st)) => (r, st.parse::<usize>().ok()?.max(1)),
            None => (part, 1),
        };
        match range.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                v.extend((a..=b).step_by(stride));
            }
            None => v.push(range.parse().ok()?),
        }
    }
    v.sort_unstable();
    v.dedup();
    Some(v)
}

/// Write a CPU list compactly: `0-3,8,10-11`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

fn read_list(root: &Path, rel: &str) -> Option<Vec<usize>> {
    read(root, rel).and_then(|s| parse_cpu_list(&s))
}

fn read_num(root: &Path, rel: &str) -> Option<i64> {
    read(root, rel)?.trim().parse().ok()
}

/// The CPUs sharing `cpu`'s caches: (L2, last level when above L2).
fn caches(root: &Path, cpu: usize) -> (Option<Vec<usize>>, Option<Vec<usize>>) {
    let mut by_level: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for i in 0..16 {
        let dir = format!("devices/system/cpu/cpu{cpu}/cache/index{i}");
        let Some(level) = read_num(root, &format!("{dir}/level")) else {
            continue;
        };
        let kind = read(root, &format!("{dir}/type")).unwrap_or_default();
        if kind.trim() == "Instruction" {
            continue;
        }
        if let Some(shared) = read_list(root, &format!("{dir}/shared_cpu_list")) {
            by_level.insert(level, shared);
        }
    }
    let l2 = by_level.get(&2).cloned();
    let l3 = by_level
        .iter()
        .rev()
        .find(|(&lvl, _)| lvl >= 3)
        .map(|(_, v)| v.clone());
    (l2, l3)
}

impl Topology {
    /// Read the topology under `root` (`/sys` on a live machine) for the CPUs in
    /// `allowed` (this process's affinity; None: every online CPU).
    pub fn read(root: &Path, allowed: Option<&[usize]>) -> Topology {
        let online = read_list(root, "devices/system/cpu/online").unwrap_or_default();
        let possible = read_list(root, "devices/system/cpu/possible").unwrap_or_default();
        let isolated = read_list(root, "devices/system/cpu/isolated").unwrap_or_default();
        let mut node_of: BTreeMap<usize, usize> = BTreeMap::new();
        let nodes = std::fs::read_dir(root.join("devices/system/node"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_prefix("node")?
                    .parse::<usize>()
                    .ok()
            });
        for n in nodes {
            for c in
                read_list(root, &format!("devices/system/node/node{n}/cpulist")).unwrap_or_default()
            {
                node_of.insert(c, n);
            }
        }
        let mut cpus = Vec::new();
        let mut not_allowed = Vec::new();
        for &cpu in &online {
            if allowed.is_some_and(|a| !a.contains(&cpu)) {
                not_allowed.push(cpu);
                continue;
            }
            let t = |f: &str| format!("devices/system/cpu/cpu{cpu}/topology/{f}");
            let (l2, l3) = caches(root, cpu);
            cpus.push(CpuPlace {
                cpu,
                package: read_num(root, &t("physical_package_id")).unwrap_or(0),
                die: read_num(root, &t("die_id")).unwrap_or(0),
                core: read_num(root, &t("core_id")).unwrap_or(cpu as i64),
                node: node_of.get(&cpu).copied(),
                smt_siblings: read_list(root, &t("thread_siblings_list"))
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| vec![cpu]),
                l2,
                l3,
            });
        }
        let offline = possible
            .into_iter()
            .filter(|c| !online.contains(c))
            .collect();
        Topology {
            cpus,
            offline,
            not_allowed,
            isolated,
        }
    }

    /// This machine's, for the CPUs this process may use.
    pub fn current() -> Topology {
        let allowed = ipcperf_sys::cpu::allowed_cpus().ok();
        Topology::read(Path::new("/sys"), allowed.as_deref())
    }

    pub fn place(&self, cpu: usize) -> Option<&CpuPlace> {
        // `cpus` is in CPU order (the kernel's online list is).
        self.cpus
            .binary_search_by_key(&cpu, |p| p.cpu)
            .ok()
            .map(|i| &self.cpus[i])
    }

    /// The closest relation of two usable CPUs; None when one is not usable here.
    pub fn classify(&self, a: usize, b: usize) -> Option<PlacementClass> {
        let (pa, pb) = (self.place(a)?, self.place(b)?);
        Some(if a == b {
            PlacementClass::SameCpu
        } else if pa.smt_siblings.contains(&b) {
            PlacementClass::SmtSibling
        } else if pa.l2.as_ref().is_some_and(|l| l.contains(&b)) {
            PlacementClass::SharedL2
        } else if pa.package != pb.package {
            PlacementClass::OtherSocket
        } else if pa.node.is_some() && pb.node.is_some() && pa.node != pb.node {
            // Before the L3: sub-NUMA clusters (Intel SNC, AMD NPS2/4) split a
            // package into memory nodes while its L3 is reported whole. Crossing a
            // node boundary is the relation that matters for where memory lives.
            PlacementClass::OtherNuma
        } else if pa.l3.as_ref().is_some_and(|l| l.contains(&b)) {
            PlacementClass::SharedL3
        } else {
            PlacementClass::OtherL3
        })
    }

    /// One representative pair of `class`: the first CPU that has a partner of that
    /// class, with its lowest such partner; None when this machine has no such pair.
    pub fn representative(&self, class: PlacementClass) -> Option<(usize, usize)> {
        for a in &self.cpus {
            for b in &self.cpus {
                if self.classify(a.cpu, b.cpu) == Some(class) {
                    return Some((a.cpu, b.cpu));
                }
            }
        }
        None
    }

    /// `n` CPU pairs for many pairs at once: each pair's two sides on two CPUs
    /// (one for `same-cpu`, or on a 1-CPU machine), of `class` when one is given,
    /// and no two pairs sharing a CPU while pairs of unused CPUs remain; past that
    /// the choice starts over (pairs then share CPUs). None: no pair of `class`.
    pub fn spread(&self, n: usize, class: Option<PlacementClass>) -> Option<Vec<(usize, usize)>> {
        let cpus: Vec<usize> = self.cpus.iter().map(|p| p.cpu).collect();
        let mut cand = Vec::new();
        for &a in &cpus {
            for &b in &cpus {
                let ok = match class {
                    Some(c) => self.classify(a, b) == Some(c),
                    None => a < b || (cpus.len() == 1 && a == b),
                };
                if ok && (a <= b || class.is_some()) {
                    cand.push((a, b));
                }
            }
        }
        if cand.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(n);
        let mut used: Vec<usize> = Vec::new();
        while out.len() < n {
            let free = cand
                .iter()
                .find(|(a, b)| !used.contains(a) && !used.contains(b));
            match free {
                Some(&(a, b)) => {
                    used.push(a);
                    used.push(b);
                    out.push((a, b));
                }
                // Every CPU that can take a pair has one: start over.
                None => used.clear(),
            }
        }
        Some(out)
    }

    /// Every class this machine has, each with its representative pair.
    pub fn classes(&self) -> Vec<(PlacementClass, (usize, usize))> {
        PlacementClass::ALL
            .into_iter()
            .filter_map(|c| self.representative(c).map(|p| (c, p)))
            .collect()
    }

    /// Why `class` has no pair here, in one line.
    pub fn absent_reason(&self, class: PlacementClass) -> String {
        let n = self.cpus.len();
        format!(
            "this machine has no {} pair ({}) among the {n} CPU{} this process may use ({})",
            class.name(),
            class.describe(),
            if n == 1 { "" } else { "s" },
            format_cpu_list(&self.cpus.iter().map(|p| p.cpu).collect::<Vec<_>>())
        )
    }

    /// Distinct values of a field among the usable CPUs.
    fn count<T: Ord>(&self, f: impl Fn(&CpuPlace) -> T) -> usize {
        self.cpus
            .iter()
            .map(f)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    }

    pub fn packages(&self) -> usize {
        self.count(|p| p.package)
    }
    pub fn nodes(&self) -> usize {
        self.count(|p| p.node)
    }
    pub fn cores(&self) -> usize {
        self.count(|p| (p.package, p.die, p.core))
    }
    /// The last-level cache domains, as their CPU lists.
    pub fn l3_domains(&self) -> Vec<Vec<usize>> {
        self.domains(|p| p.l3.clone())
    }
    pub fn l2_domains(&self) -> Vec<Vec<usize>> {
        self.domains(|p| p.l2.clone())
    }
    fn domains(&self, f: impl Fn(&CpuPlace) -> Option<Vec<usize>>) -> Vec<Vec<usize>> {
        let mut v: Vec<Vec<usize>> = self.cpus.iter().filter_map(f).collect();
        v.sort();
        v.dedup();
        v
    }
    /// Whether any core runs more than one hardware thread.
    pub fn smt(&self) -> bool {
        self.cpus.iter().any(|p| p.smt_siblings.len() > 1)
    }
}

#[cfg(test)]
pub(crate) mod tests;
