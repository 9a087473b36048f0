//! A description of the machine a run happened on, read from /proc and uname.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Machine {
    pub hostname: String,
    pub kernel: String,
    pub os: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
    pub virtualization: Option<String>,
    /// IPC limits ipcperf relies on, by sysctl name.
    pub limits: BTreeMap<String, String>,
    /// CPU frequency governor (cpu0's), where cpufreq is exposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_governor: Option<String>,
    /// Vulnerability mitigations as the kernel reports them
    /// (/sys/devices/system/cpu/vulnerabilities), by vulnerability.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mitigations: BTreeMap<String, String>,
    /// Where the CPUs this run could use sit (absent in runs saved before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<crate::topology::Topology>,
    /// What could distort the figures when the run started (absent in older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<crate::machine_state::MachineState>,
    /// The batch scheduler that launched the run (Slurm, Kubernetes), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<Scheduler>,
    /// The CPUs' one-way latencies as measured (`topology --measure`), with when
    /// and in which boot: in a VM a snapshot of where the host ran the vCPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<crate::c2c::Measured>,
}

/// Where a run came from when a scheduler launched it: which one, the job, the
/// array task, the node (as the scheduler names it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Scheduler {
    /// `slurm` or `kubernetes`.
    pub kind: String,
    /// Slurm: the job id (an array's own job id for each task); Kubernetes: the
    /// Job's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Slurm: the array's job id and this task's index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_job_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_task_id: Option<String>,
    /// The node the scheduler ran it on; Kubernetes: also the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
}

impl Scheduler {
    /// From the environment the scheduler gives its jobs: Slurm's `SLURM_*`, or
    /// on Kubernetes the pod's `KUBERNETES_SERVICE_HOST` and what the manifests in
    /// deploy/kubernetes pass down (`IPCPERF_K8S_JOB`, `IPCPERF_K8S_NODE`,
    /// `IPCPERF_K8S_POD`).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<Scheduler> {
        let get = |k: &str| get(k).filter(|v| !v.is_empty());
        if let Some(job) = get("SLURM_JOB_ID") {
            return Some(Scheduler {
                kind: "slurm".into(),
                job_id: Some(job),
                array_job_id: get("SLURM_ARRAY_JOB_ID"),
                array_task_id: get("SLURM_ARRAY_TASK_ID"),
                node: get("SLURMD_NODENAME").or_else(|| get("SLURM_NODENAME")),
                pod: None,
            });
        }
        if get("KUBERNETES_SERVICE_HOST").is_some() {
            return Some(Scheduler {
                kind: "kubernetes".into(),
                job_id: get("IPCPERF_K8S_JOB"),
                array_job_id: None,
                array_task_id: get("JOB_COMPLETION_INDEX"),
                node: get("IPCPERF_K8S_NODE"),
                pod: get("IPCPERF_K8S_POD").or_else(|| get("HOSTNAME")),
            });
        }
        None
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The sysctls that bound what ipcperf can do, as read here.
pub const LIMIT_FILES: &[(&str, &str)] = &[
    ("fs.pipe-max-size", "/proc/sys/fs/pipe-max-size"),
    ("net.core.wmem_max", "/proc/sys/net/core/wmem_max"),
    ("net.core.rmem_max", "/proc/sys/net/core/rmem_max"),
    ("net.ipv4.tcp_wmem", "/proc/sys/net/ipv4/tcp_wmem"),
    ("net.ipv4.tcp_rmem", "/proc/sys/net/ipv4/tcp_rmem"),
    // Which congestion control new TCP connections get: through a veth pair on
    // this 2-CPU guest, reno moved ~4.5 GB/s where bbr (its default) moved ~2.5.
    (
        "net.ipv4.tcp_congestion_control",
        "/proc/sys/net/ipv4/tcp_congestion_control",
    ),
    ("net.core.wmem_default", "/proc/sys/net/core/wmem_default"),
    ("net.core.rmem_default", "/proc/sys/net/core/rmem_default"),
    ("kernel.msgmax", "/proc/sys/kernel/msgmax"),
    ("kernel.msgmnb", "/proc/sys/kernel/msgmnb"),
    ("kernel.msgmni", "/proc/sys/kernel/msgmni"),
    ("fs.mqueue.msgsize_max", "/proc/sys/fs/mqueue/msgsize_max"),
    ("fs.mqueue.msg_max", "/proc/sys/fs/mqueue/msg_max"),
    ("fs.mqueue.queues_max", "/proc/sys/fs/mqueue/queues_max"),
    ("net.core.somaxconn", "/proc/sys/net/core/somaxconn"),
    (
        "net.unix.max_dgram_qlen",
        "/proc/sys/net/unix/max_dgram_qlen",
    ),
    ("kernel.sem", "/proc/sys/kernel/sem"),
    ("kernel.shmmax", "/proc/sys/kernel/shmmax"),
    ("kernel.shmall", "/proc/sys/kernel/shmall"),
    ("kernel.shmmni", "/proc/sys/kernel/shmmni"),
];

/// Each vulnerability the kernel knows and how it is mitigated here.
fn mitigations() -> BTreeMap<String, String> {
    let dir = "/sys/devices/system/cpu/vulnerabilities";
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            std::fs::read_to_string(e.path())
                .ok()
                .map(|v| (name, v.trim().to_string()))
        })
        .collect()
}

impl Machine {
    /// The host a run is kept under: the node its scheduler launched it on
    /// (Slurm's node, the Kubernetes node), else its host name. A pod's or a
    /// job's own host name changes from one night to the next; its node does
    /// not, so `fleet`, `trend`, `history` and `compare` follow the node.
    pub fn host(&self) -> &str {
        self.scheduler
            .as_ref()
            .and_then(|s| s.node.as_deref())
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(&self.hostname)
    }

    pub fn collect() -> Machine {
        let uts = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            uts.as_ref()
                .map(|u| f(u).to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let hypervisor = cpuinfo
            .lines()
            .find(|l| l.starts_with("flags"))
            .map(|l| l.split_whitespace().any(|f| f == "hypervisor"))
            .unwrap_or(false);
        let memory_bytes = read("/proc/meminfo")
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|k| k.parse::<u64>().ok())
            })
            .map(|k| k * 1024)
            .unwrap_or(0);
        let os = read("/etc/os-release")
            .and_then(|s| {
                s.lines().find(|l| l.starts_with("PRETTY_NAME=")).map(|l| {
                    l.trim_start_matches("PRETTY_NAME=")
                        .trim_matches('"')
                        .to_string()
                })
            })
            .unwrap_or_else(|| field(|u| u.sysname()));
        let virtualization = read("/sys/class/dmi/id/sys_vendor")
            .filter(|_| hypervisor)
            .or_else(|| hypervisor.then(|| "hypervisor".to_string()));
        let limits = LIMIT_FILES
            .iter()
            .filter_map(|(k, p)| read(p).map(|v| (k.to_string(), v.replace('\t', " "))))
            .collect();
        Machine {
            hostname: field(|u| u.nodename()),
            kernel: field(|u| u.release()),
            os,
            arch: field(|u| u.machine()),
            cpu_model,
            cpus: ipcperf_sys::cpu::online_cpus(),
            memory_bytes,
            virtualization,
            limits,
            cpu_governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            mitigations: mitigations(),
            topology: Some(crate::topology::Topology::current()),
            state: Some(crate::machine_state::MachineState::current(
                ipcperf_sys::cpu::online_cpus(),
                hypervisor,
            )),
            scheduler: Scheduler::from_env(|k| std::env::var(k).ok()),
            measured: None,
        }
        .printable()
    }

    /// Its names as every table shows them: a control character (a host name set
    /// with a line break or an escape sequence, a scheduler's variable) as U+FFFD,
    /// so no table splits its rows and no terminal takes a sequence from a run.
    /// `import` refuses a run whose names hold one.
    pub fn printable(mut self) -> Machine {
        let clean = |s: &mut String| {
            if s.chars().any(char::is_control) {
                *s = s
                    .chars()
                    .map(|c| if c.is_control() { '\u{fffd}' } else { c })
                    .collect();
            }
        };
        for s in [
            &mut self.hostname,
            &mut self.kernel,
            &mut self.os,
            &mut self.arch,
            &mut self.cpu_model,
        ] {
            clean(s);
        }
        for s in [&mut self.virtualization, &mut self.cpu_governor]
            .into_iter()
            .flatten()
        {
            clean(s);
        }
        if let Some(sc) = &mut self.scheduler {
            clean(&mut sc.kind);
            for s in [
                &mut sc.job_id,
                &mut sc.array_job_id,
                &mut sc.array_task_id,
                &mut sc.node,
                &mut sc.pod,
            ]
            .into_iter()
            .flatten()
            {
                clean(s);
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_in_its_names_are_shown_as_replacement_characters() {
        let m = Machine {
            hostname: "a\nb".into(),
            cpu_model: "\u{1b}[31mred".into(),
            cpu_governor: Some("x\ty".into()),
            scheduler: Some(Scheduler {
                kind: "slurm".into(),
                node: Some("n\r1".into()),
                ..Scheduler::default()
            }),
            ..Machine::default()
        }
        .printable();
        assert_eq!(m.hostname, "a\u{fffd}b");
        assert_eq!(m.cpu_model, "\u{fffd}[31mred");
        assert_eq!(m.cpu_governor.as_deref(), Some("x\u{fffd}y"));
        assert_eq!(m.host(), "n\u{fffd}1");
        let plain = Machine {
            hostname: "node-1 «é»".into(),
            ..Machine::default()
        };
        assert_eq!(plain.clone().printable(), plain);
    }

    #[test]
    fn a_scheduler_is_named_from_its_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let s = Scheduler::from_env(env(&[
            ("SLURM_JOB_ID", "1043"),
            ("SLURM_ARRAY_JOB_ID", "1040"),
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURMD_NODENAME", "node17"),
        ]))
        .unwrap();
        assert_eq!(
            (
                s.kind.as_str(),
                s.job_id.as_deref(),
                s.array_task_id.as_deref()
            ),
            ("slurm", Some("1043"), Some("3"))
        );
        assert_eq!(s.node.as_deref(), Some("node17"));
        let k = Scheduler::from_env(env(&[
            ("KUBERNETES_SERVICE_HOST", "10.0.0.1"),
            ("IPCPERF_K8S_NODE", "worker-2"),
            ("HOSTNAME", "ipcperf-suite-x7"),
        ]))
        .unwrap();
        assert_eq!(k.kind, "kubernetes");
        assert_eq!(k.node.as_deref(), Some("worker-2"));
        assert_eq!(k.pod.as_deref(), Some("ipcperf-suite-x7"));
        assert!(Scheduler::from_env(env(&[("SLURM_JOB_ID", "")])).is_none());
        assert!(Scheduler::from_env(env(&[])).is_none());
    }

    #[test]
    fn the_record_names_the_tcp_congestion_control_as_the_kernel_says() {
        let Some(cc) = read("/proc/sys/net/ipv4/tcp_congestion_control") else {
            eprintln!("skipped: this kernel has no /proc/sys/net/ipv4/tcp_congestion_control");
            return;
        };
        let m = Machine::collect();
        assert_eq!(m.limits.get("net.ipv4.tcp_congestion_control"), Some(&cc));
    }
}
