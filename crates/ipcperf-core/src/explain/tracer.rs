//! The two tracers `--explain` can read the kernel's events through, and the
//! choice between them: perf (`perf_event_open`, [`ipcperf_sys::trace`]) or a
//! private ftrace instance ([`ipcperf_sys::ftrace`]). They see the same events
//! on most kernels, but not on all: on some (this project's Firecracker guests)
//! perf gets nothing from a secondary CPU's idle task, where a server woken by
//! an IPI has its `sched_wakeup` written, and ftrace does. So `auto` runs a
//! short probe with each (a pipe ping-pong between two threads on the case's
//! two CPUs), keeps the one that saw more of the wake-ups, the cheaper one
//! where they saw alike, and says why.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

use ipcperf_sys::ftrace::Instance;
use ipcperf_sys::trace::{Sample, Tracefs, Tracer};

/// Which tracer `--explain` uses (`--tracer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TracerChoice {
    /// Each where it sees more, per machine and pair of CPUs (a probe).
    #[default]
    Auto,
    Perf,
    Tracefs,
}

impl TracerChoice {
    pub const NAMES: [&'static str; 3] = ["auto", "perf", "tracefs"];

    pub fn parse(s: &str) -> Option<TracerChoice> {
        match s {
            "auto" => Some(TracerChoice::Auto),
            "perf" => Some(TracerChoice::Perf),
            "tracefs" | "ftrace" => Some(TracerChoice::Tracefs),
            _ => None,
        }
    }
}

static CHOICE: AtomicU8 = AtomicU8::new(0);

/// Set the tracer every later traced series of this process uses.
pub fn set_tracer(c: TracerChoice) {
    CHOICE.store(c as u8, Ordering::Relaxed);
}

fn chosen() -> TracerChoice {
    match CHOICE.load(Ordering::Relaxed) {
        1 => TracerChoice::Perf,
        2 => TracerChoice::Tracefs,
        _ => TracerChoice::Auto,
    }
}

/// A tracer that runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Perf,
    Tracefs,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Perf => "perf",
            Kind::Tracefs => "tracefs",
        }
    }
}

/// One event to trace: its tracefs name, its id (perf's `config`), its filter.
pub(crate) struct Ev {
    pub sys: &'static str,
    pub name: &'static str,
    pub id: u64,
    pub filter: Option<String>,
}

/// The events of a traced series, buffered per CPU by one tracer.
pub(crate) enum Backend {
    Perf(Tracer),
    Tracefs(Instance),
}

/// Buffer per CPU for tracefs, KiB (within what a series of round trips writes).
fn tracefs_kb(cpus: usize, total_bytes: usize) -> usize {
    (total_bytes / 1024 / cpus.max(1)).clamp(1024, 16 << 10)
}

impl Backend {
    pub(crate) fn open(
        kind: Kind,
        events: &[Ev],
        cpus: &[usize],
        total_bytes: usize,
    ) -> Result<Backend, String> {
        match kind {
            Kind::Perf => {
                let pages = (total_bytes / 4096 / cpus.len().max(1)).clamp(16, 2048);
                let ev: Vec<(u64, Option<String>)> =
                    events.iter().map(|e| (e.id, e.filter.clone())).collect();
                match Tracer::open(&ev, cpus, pages) {
                    Ok(t) => Ok(Backend::Perf(t)),
                    // A kernel that refuses a filter: every event, sorted out after.
                    Err(e) if e.errno == ipcperf_sys::error::Errno::EINVAL => {
                        let plain: Vec<(u64, Option<String>)> =
                            ev.iter().map(|(i, _)| (*i, None)).collect();
                        Tracer::open(&plain, cpus, pages)
                            .map(Backend::Perf)
                            .map_err(|e| refused(&e))
                    }
                    Err(e) => Err(refused(&e)),
                }
            }
            Kind::Tracefs => {
                let tfs = Tracefs::find()?;
                tfs.readable()?;
                if !tfs.dir().join("instances").is_dir() {
                    return Err("this tracefs has no instances directory".into());
                }
                // Instances a killed run left.
                ipcperf_sys::ftrace::sweep(&tfs);
                let ev: Vec<(&str, &str, Option<String>)> = events
                    .iter()
                    .map(|e| (e.sys, e.name, e.filter.clone()))
                    .collect();
                Instance::create(tfs, &ev, cpus, tracefs_kb(cpus.len(), total_bytes))
                    .map(Backend::Tracefs)
                    .map_err(|e| format!("a tracefs instance cannot be made here: {e}"))
            }
        }
    }

    pub(crate) fn enable(&mut self) -> Result<(), String> {
        match self {
            Backend::Perf(t) => t.enable().map_err(|e| refused(&e)),
            Backend::Tracefs(i) => i.enable().map_err(|e| e.to_string()),
        }
    }

    pub(crate) fn disable(&mut self) {
        let _ = match self {
            Backend::Perf(t) => t.disable(),
            Backend::Tracefs(i) => i.disable(),
        };
    }

    pub(crate) fn read(&mut self) -> (Vec<Sample>, u64) {
        match self {
            Backend::Perf(t) => t.read(),
            Backend::Tracefs(i) => i.read(),
        }
    }
}

/// Why tracing cannot start, in the words a user acts on.
pub(crate) fn refused(e: &ipcperf_sys::SysError) -> String {
    use ipcperf_sys::error::Errno;
    if matches!(e.errno, Errno::EACCES | Errno::EPERM) {
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        format!(
            "tracing the scheduler needs root or CAP_PERFMON (kernel.perf_event_paranoid is \
             {paranoid}; -1 lets anyone): {e}"
        )
    } else {
        format!("the kernel's tracepoints cannot be sampled here: {e}")
    }
}

/// What a probe of one tracer found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Probe {
    /// Of the helper's wake-ups asked (`sched_waking`), the share whose
    /// `sched_wakeup` was seen.
    pub seen: f64,
    /// Round trip of the probe's ping-pong under it, ns (its median).
    pub ns: u64,
}

const PROBE_ROUND_TRIPS: usize = 300;

/// A pipe ping-pong between this thread on `cpus.0` and a helper on `cpus.1`,
/// traced by `kind` (`waking`/`wakeup`: the events' formats).
fn probe(kind: Kind, cpus: (usize, usize), f: &super::formats::Formats) -> Result<Probe, String> {
    use std::io::{Read, Write};
    let _pin = ipcperf_sys::cpu::PinGuard::pin(Some(cpus.0)).map_err(|e| e.to_string())?;
    let (mut there_r, mut there_w) = std::io::pipe().map_err(|e| e.to_string())?;
    let (mut back_r, mut back_w) = std::io::pipe().map_err(|e| e.to_string())?;
    let (tx, rx) = std::sync::mpsc::channel();
    let helper = std::thread::spawn(move || {
        let _ = ipcperf_sys::cpu::pin_current_thread(cpus.1);
        let _ = tx.send(nix::unistd::gettid().as_raw() as i64);
        let mut b = [0u8; 1];
        // Ends when this side's write end closes (read gives 0).
        while matches!(there_r.read(&mut b), Ok(1)) {
            if back_w.write_all(&b).is_err() {
                break;
            }
        }
    });
    let mut run = || -> Result<Probe, String> {
        let them = rx
            .recv_timeout(std::time::Duration::from_secs(2))
            .map_err(|_| "the probe's helper thread did not start".to_string())?;
        let me = nix::unistd::gettid().as_raw() as i64;
        let both = format!("common_pid == {me} || common_pid == {them}");
        let Some(waking) = f.waking.as_ref() else {
            return Err("no sched_waking here".into());
        };
        let events = vec![
            Ev {
                sys: "sched",
                name: "sched_wakeup",
                id: f.wakeup.id,
                filter: Some(format!("pid == {them}")),
            },
            Ev {
                sys: "raw_syscalls",
                name: "sys_enter",
                id: f.enter.id,
                filter: Some(both.clone()),
            },
            Ev {
                sys: "raw_syscalls",
                name: "sys_exit",
                id: f.exit.id,
                filter: Some(both),
            },
            Ev {
                sys: "sched",
                name: "sched_waking",
                id: waking.id,
                filter: Some(format!("pid == {them}")),
            },
        ];
        let cpu_set: Vec<usize> = if cpus.0 == cpus.1 {
            vec![cpus.0]
        } else {
            vec![cpus.0, cpus.1]
        };
        let mut b = Backend::open(kind, &events, &cpu_set, 8 << 20)?;
        let mut one = [7u8; 1];
        let mut times = Vec::with_capacity(PROBE_ROUND_TRIPS);
        b.enable()?;
        for _ in 0..PROBE_ROUND_TRIPS {
            let t = ipcperf_sys::clock::now_ns();
            there_w.write_all(&one).map_err(|e| e.to_string())?;
            back_r.read_exact(&mut one).map_err(|e| e.to_string())?;
            times.push(ipcperf_sys::clock::now_ns() - t);
        }
        b.disable();
        let (samples, _) = b.read();
        // By the woken task's pid: perf may have run unfiltered.
        let count = |e: &ipcperf_sys::trace::EventFormat| {
            samples
                .iter()
                .filter(|s| s.event_id() == Some(e.id) && e.int(&s.raw, "pid") == Some(them))
                .count()
        };
        let (asked, seen) = (count(waking), count(&f.wakeup));
        times.sort_unstable();
        Ok(Probe {
            seen: if asked > 0 {
                (seen as f64 / asked as f64).min(1.0)
            } else {
                1.0
            },
            ns: times[times.len() / 2],
        })
    };
    let r = run();
    drop(there_w);
    let _ = helper.join();
    r
}

/// The tracer to run on `cpus` (the case's two, the same twice on one CPU), and
/// why; probed once per pair of CPUs and process.
pub(crate) fn choose(cpus: (usize, usize), f: &super::formats::Formats) -> (Kind, String) {
    static CHOSEN: Mutex<BTreeMap<(usize, usize), (Kind, String)>> = Mutex::new(BTreeMap::new());
    match chosen() {
        TracerChoice::Perf => return (Kind::Perf, "--tracer perf".into()),
        TracerChoice::Tracefs => return (Kind::Tracefs, "--tracer tracefs".into()),
        TracerChoice::Auto => {}
    }
    let mut cache = CHOSEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = cache.get(&cpus) {
        return c.clone();
    }
    let p = probe(Kind::Perf, cpus, f);
    let t = probe(Kind::Tracefs, cpus, f);
    let pct = |x: f64| format!("{:.0}%", 100.0 * x);
    let us = |ns: u64| format!("{:.1} µs", ns as f64 / 1e3);
    let c = match (p, t) {
        (Ok(p), Ok(t)) if (t.seen - p.seen).abs() > 0.01 => {
            let k = if t.seen > p.seen {
                Kind::Tracefs
            } else {
                Kind::Perf
            };
            (
                k,
                format!(
                    "a probe's wake-ups on CPU {} seen: tracefs {}, perf {}",
                    cpus.1,
                    pct(t.seen),
                    pct(p.seen)
                ),
            )
        }
        (Ok(p), Ok(t)) => {
            let k = if t.ns < p.ns {
                Kind::Tracefs
            } else {
                Kind::Perf
            };
            (
                k,
                format!(
                    "both saw {} of a probe's wake-ups; its round trip traced: tracefs {}, perf {}",
                    pct(p.seen.min(t.seen)),
                    us(t.ns),
                    us(p.ns)
                ),
            )
        }
        (Ok(_), Err(why)) => (Kind::Perf, format!("tracefs cannot run: {why}")),
        (Err(why), Ok(_)) => (Kind::Tracefs, format!("perf cannot run: {why}")),
        // Neither: perf's refusal is the one a user acts on.
        (Err(why), Err(_)) => (Kind::Perf, why),
    };
    cache.insert(cpus, c.clone());
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracer_names_parse() {
        for n in TracerChoice::NAMES {
            assert!(TracerChoice::parse(n).is_some(), "{n}");
        }
        assert_eq!(TracerChoice::parse("ftrace"), Some(TracerChoice::Tracefs));
        assert_eq!(TracerChoice::parse("bpf"), None);
    }

    #[test]
    fn tracefs_buffers_stay_within_bounds() {
        assert_eq!(tracefs_kb(2, 64 << 20), 16 << 10);
        assert_eq!(tracefs_kb(200, 64 << 20), 1024);
    }
}
