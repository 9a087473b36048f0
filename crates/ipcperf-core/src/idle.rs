//! The CPUs' idle state as a variable of the measurement: what the machine has
//! (its cpuidle driver, governor and states, haltpoll's parameters, `idle=`,
//! the latency request in force), kept with every run; and the request a case
//! runs under (`--idle as-is|poll|LATENCY`).
//!
//! On a VM whose idle state halts the vCPU (cpuidle `haltpoll`, or `acpi_idle`
//! with C-states), a sleeping round trip across CPUs is mostly the wake-up of
//! the halted vCPU; holding the latency request at 0 keeps the CPUs polling,
//! and what is left is the mechanism.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The idle a case runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Idle {
    /// The machine as it is: what an application gets.
    #[default]
    AsIs,
    /// No idle state deeper than polling (the latency request held at 0).
    Poll,
    /// Only idle states that exit within this many µs.
    Within { us: u32 },
}

impl Idle {
    pub fn is_as_is(&self) -> bool {
        *self == Idle::AsIs
    }

    /// The latency request it holds, µs (None: as-is).
    pub fn request_us(&self) -> Option<u32> {
        match self {
            Idle::AsIs => None,
            Idle::Poll => Some(0),
            Idle::Within { us } => Some(*us),
        }
    }

    /// As `--idle` spells it: `as-is`, `poll`, `20us`.
    pub fn label(&self) -> String {
        match self {
            Idle::AsIs => "as-is".into(),
            Idle::Poll => "poll".into(),
            Idle::Within { us } => format!("{us}us"),
        }
    }

    /// Hold the request for as long as the guard lives (None: as-is, nothing
    /// held). Refused where it cannot be made.
    pub fn hold(&self) -> Result<Option<ipcperf_sys::idle::LatencyRequest>> {
        match self.request_us() {
            None => Ok(None),
            Some(us) => ipcperf_sys::idle::LatencyRequest::hold(us)
                .map(Some)
                .map_err(|e| {
                    Error::Refused(format!(
                        "--idle {}: {}: {e}",
                        self.label(),
                        ipcperf_sys::idle::DEVICE
                    ))
                }),
        }
    }
}

/// A record's options for a case held at `idle` (none as-is).
pub fn options(idle: Idle) -> BTreeMap<String, String> {
    (!idle.is_as_is())
        .then(|| ("idle".to_string(), idle.label()))
        .into_iter()
        .collect()
}

/// The option that says why a case's idle probe was not taken.
pub const NO_IDLE_PROBE: &str = "idle_probe";

/// The request for a case's idle probe (polling idle), or None with the reason
/// kept in the case's options.
pub fn probe_hold(
    options: &mut BTreeMap<String, String>,
) -> Option<ipcperf_sys::idle::LatencyRequest> {
    match Idle::Poll.hold() {
        Ok(h) => h,
        Err(e) => {
            options.insert(NO_IDLE_PROBE.into(), format!("not measured: {e}"));
            None
        }
    }
}

/// One idle state of a CPU, as cpuidle lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleStateInfo {
    pub name: String,
    /// Exit latency the driver declares, µs (a VM's driver may declare 1 µs
    /// for a halt whose wake-up costs the host's tens of µs).
    pub latency_us: u64,
    /// Target residency, µs.
    pub residency_us: u64,
    /// Disabled by the administrator.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
}

impl IdleStateInfo {
    /// Polling: the CPU spins, nothing halts.
    pub fn polls(&self) -> bool {
        self.name.eq_ignore_ascii_case("poll")
    }
}

/// The machine's idle state: what decides how fast an idle CPU wakes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IdleInfo {
    /// The cpuidle driver (`haltpoll`, `intel_idle`, `acpi_idle`); None where
    /// there is none (the architecture's default halt).
    pub driver: Option<String>,
    pub governor: Option<String>,
    /// cpu0's states, shallowest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<IdleStateInfo>,
    /// CPUs whose states differ from cpu0's, with theirs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub differing: BTreeMap<usize, Vec<IdleStateInfo>>,
    /// haltpoll's parameters (guest_halt_poll_ns …), where the module is there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub haltpoll: BTreeMap<String, String>,
    /// `idle=` on the kernel's command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline_idle: Option<String>,
    /// The latency request in force when read, µs (None: nobody holds one, or
    /// it could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_us: Option<i64>,
}

use crate::sysfs::read;

fn states_of(root: &Path, cpu: usize) -> Vec<IdleStateInfo> {
    let mut v = Vec::new();
    for i in 0.. {
        let d = format!("sys/devices/system/cpu/cpu{cpu}/cpuidle/state{i}");
        let Some(name) = read(root, &format!("{d}/name")) else {
            break;
        };
        let num = |f: &str| {
            read(root, &format!("{d}/{f}"))
                .and_then(|x| x.parse().ok())
                .unwrap_or(0)
        };
        v.push(IdleStateInfo {
            name,
            latency_us: num("latency"),
            residency_us: num("residency"),
            disabled: num("disable") != 0,
        });
    }
    v
}

impl IdleInfo {
    /// Read under `root` (`/` on a live machine) for `cpus`; the request in
    /// force is read from the live device only when `root` is `/`.
    pub fn read(root: &Path, cpus: &[usize]) -> IdleInfo {
        let base = "sys/devices/system/cpu/cpuidle";
        let driver = read(root, &format!("{base}/current_driver")).filter(|d| d != "none");
        let governor = read(root, &format!("{base}/current_governor_ro"))
            .or_else(|| read(root, &format!("{base}/current_governor")));
        let first = cpus.first().copied().unwrap_or(0);
        let states = states_of(root, first);
        let differing = cpus
            .iter()
            .skip(1)
            .map(|&c| (c, states_of(root, c)))
            .filter(|(_, s)| *s != states)
            .collect();
        let mut haltpoll = BTreeMap::new();
        for m in ["haltpoll", "cpuidle_haltpoll"] {
            let dir = root.join(format!("sys/module/{m}/parameters"));
            if let Ok(rd) = std::fs::read_dir(&dir) {
                for e in rd.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if let Some(v) = read(root, &format!("sys/module/{m}/parameters/{name}")) {
                        haltpoll.insert(name, v);
                    }
                }
            }
        }
        let cmdline_idle = read(root, "proc/cmdline").and_then(|c| {
            c.split_whitespace()
                .find_map(|w| w.strip_prefix("idle=").map(str::to_string))
        });
        let request_us = if root == Path::new("/") {
            ipcperf_sys::idle::in_force_us()
                .filter(|&v| v != ipcperf_sys::idle::NO_LIMIT_US)
                .map(i64::from)
        } else {
            read(root, "dev-cpu_dma_latency").and_then(|v| v.parse().ok())
        };
        IdleInfo {
            driver,
            governor,
            states,
            differing,
            haltpoll,
            cmdline_idle,
            request_us,
        }
    }

    /// This machine's, now.
    pub fn current() -> IdleInfo {
        let cpus = ipcperf_sys::cpu::allowed_cpus().unwrap_or_default();
        IdleInfo::read(Path::new("/"), &cpus)
    }

    /// Whether an idle CPU may halt (an idle state deeper than polling, or no
    /// cpuidle driver at all: the architecture's halt). `idle=poll` never halts.
    pub fn may_halt(&self) -> bool {
        if self.cmdline_idle.as_deref() == Some("poll") {
            return false;
        }
        self.driver.is_none() || self.states.iter().any(|s| !s.polls() && !s.disabled)
    }

    /// Whether a latency request changes anything here: a cpuidle driver with
    /// a state deeper than polling (without a driver the kernel halts with no
    /// regard to the request).
    pub fn request_matters(&self) -> bool {
        self.cmdline_idle.as_deref() != Some("poll")
            && self.driver.is_some()
            && self.states.iter().any(|s| !s.polls() && !s.disabled)
    }

    /// One line: `cpuidle haltpoll (governor haltpoll): POLL 0 µs, haltpoll idle 1 µs`.
    pub fn summary(&self) -> String {
        let Some(d) = &self.driver else {
            return match &self.cmdline_idle {
                Some(i) => format!("no cpuidle driver (idle={i})"),
                None => "no cpuidle driver: an idle CPU halts (the architecture's default)".into(),
            };
        };
        let states: Vec<String> = self
            .states
            .iter()
            .map(|s| {
                format!(
                    "{} {} µs{}",
                    s.name,
                    s.latency_us,
                    if s.disabled { " (disabled)" } else { "" }
                )
            })
            .collect();
        let mut line = format!(
            "cpuidle {d}{}: {}",
            self.governor
                .as_ref()
                .map(|g| format!(" (governor {g})"))
                .unwrap_or_default(),
            states.join(", ")
        );
        if let Some(p) = self.haltpoll.get("guest_halt_poll_ns") {
            line.push_str(&format!("; guest_halt_poll_ns {p}"));
        }
        if let Some(i) = &self.cmdline_idle {
            line.push_str(&format!("; idle={i}"));
        }
        if let Some(r) = self.request_us {
            line.push_str(&format!("; latency request {r} µs in force"));
        }
        if !self.differing.is_empty() {
            line.push_str(&format!(
                "; CPUs {} have other states",
                crate::topology::format_cpu_list(
                    &self.differing.keys().copied().collect::<Vec<_>>()
                )
            ));
        }
        line
    }
}

/// `--idle`'s value: `as-is`, `poll`, or a latency (`20us`, `20`: µs).
pub fn parse_idle(s: &str) -> std::result::Result<Idle, String> {
    match s {
        "as-is" | "asis" => Ok(Idle::AsIs),
        "poll" => Ok(Idle::Poll),
        _ => {
            let n = s
                .strip_suffix("us")
                .or_else(|| s.strip_suffix("µs"))
                .unwrap_or(s);
            n.parse::<u32>()
                .ok()
                .filter(|&v| v <= 1_000_000)
                .map(|us| {
                    if us == 0 {
                        Idle::Poll
                    } else {
                        Idle::Within { us }
                    }
                })
                .ok_or_else(|| {
                    format!("'{s}': as-is, poll, or a latency in µs (20us, 0 to 1000000)")
                })
        }
    }
}

/// Refuse, before measuring, an `--idle` this machine cannot give.
pub fn check(idle: Idle, info: &IdleInfo) -> std::result::Result<(), String> {
    if idle.is_as_is() {
        return Ok(());
    }
    if !info.request_matters() {
        return Err(format!(
            "--idle {}: {}; a latency request changes nothing here",
            idle.label(),
            info.summary()
        ));
    }
    ipcperf_sys::idle::can_request().map_err(|e| format!("--idle {}: {e}", idle.label()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, v) in files {
            let f = d.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, v).unwrap();
        }
        d
    }

    /// A haltpoll guest (this VM's kind): driver, states, parameters, and a
    /// request that matters.
    #[test]
    fn a_haltpoll_guest_is_read_whole() {
        let s0 = "sys/devices/system/cpu/cpu0/cpuidle/state0";
        let s1 = "sys/devices/system/cpu/cpu0/cpuidle/state1";
        let d = fixture(&[
            (
                "sys/devices/system/cpu/cpuidle/current_driver",
                "haltpoll\n",
            ),
            (
                "sys/devices/system/cpu/cpuidle/current_governor_ro",
                "haltpoll\n",
            ),
            (&format!("{s0}/name"), "POLL\n"),
            (&format!("{s0}/latency"), "0\n"),
            (&format!("{s0}/residency"), "0\n"),
            (&format!("{s1}/name"), "haltpoll idle\n"),
            (&format!("{s1}/latency"), "1\n"),
            (&format!("{s1}/residency"), "1\n"),
            ("sys/module/haltpoll/parameters/guest_halt_poll_ns", "0\n"),
            ("proc/cmdline", "quiet cpuidle_haltpoll.force=1\n"),
        ]);
        let i = IdleInfo::read(d.path(), &[0]);
        assert_eq!(i.driver.as_deref(), Some("haltpoll"));
        assert_eq!(i.governor.as_deref(), Some("haltpoll"));
        assert_eq!(i.states.len(), 2);
        assert!(i.states[0].polls() && !i.states[1].polls());
        assert_eq!(i.states[1].latency_us, 1);
        assert_eq!(i.haltpoll["guest_halt_poll_ns"], "0");
        assert!(i.may_halt() && i.request_matters());
        assert!(
            i.summary().contains("haltpoll idle 1 µs"),
            "{}",
            i.summary()
        );
        assert!(check(Idle::AsIs, &i).is_ok());
    }

    /// Without a cpuidle driver (the 16-CPU guest): it says so, it may halt,
    /// and no request is offered.
    #[test]
    fn a_machine_without_cpuidle_says_so_and_refuses_a_request() {
        let d = fixture(&[("sys/devices/system/cpu/cpuidle/current_driver", "none\n")]);
        let i = IdleInfo::read(d.path(), &[0, 1]);
        assert_eq!(i.driver, None);
        assert!(i.states.is_empty());
        assert!(i.may_halt() && !i.request_matters());
        assert!(i.summary().starts_with("no cpuidle driver"));
        let e = check(Idle::Poll, &i).unwrap_err();
        assert!(e.contains("changes nothing"), "{e}");
        // idle=poll on the command line: nothing halts.
        let d = fixture(&[("proc/cmdline", "idle=poll\n")]);
        let i = IdleInfo::read(d.path(), &[0]);
        assert_eq!(i.cmdline_idle.as_deref(), Some("poll"));
        assert!(!i.may_halt());
    }

    #[test]
    fn idle_values_parse() {
        assert_eq!(parse_idle("as-is"), Ok(Idle::AsIs));
        assert_eq!(parse_idle("poll"), Ok(Idle::Poll));
        assert_eq!(parse_idle("0"), Ok(Idle::Poll));
        assert_eq!(parse_idle("20us"), Ok(Idle::Within { us: 20 }));
        assert_eq!(parse_idle("20"), Ok(Idle::Within { us: 20 }));
        assert!(parse_idle("fast").is_err());
        assert!(parse_idle("-1").is_err());
    }
}
