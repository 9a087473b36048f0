//! Tracing a series: the scheduler's and the system calls' tracepoints opened on
//! the CPUs the two sides run on, filtered to their threads, enabled around one
//! series whose every cycle's start is kept, and the events cut into parts per
//! cycle (a round trip, or a sync primitive's set/clear). Used by the round-trip
//! runner and by sync.

use ipcperf_sys::trace::{EventFormat, Sample, Tracefs, Tracer};

use super::split::{split, Event, Kind};
use super::ExplainRecord;
use crate::kind::Placement;

/// Ring pages per CPU traced (4 KiB each), within a total for every CPU.
const RING_BYTES: usize = 64 << 20;

/// The tracepoints and what each becomes.
struct Formats {
    enter: EventFormat,
    exit: EventFormat,
    waking: Option<EventFormat>,
    wakeup: EventFormat,
    switch: EventFormat,
    ipi: Option<EventFormat>,
}

impl Formats {
    fn find(tfs: &Tracefs) -> std::result::Result<Formats, String> {
        tfs.readable()?;
        let need = |sys: &str, name: &str| {
            tfs.event(sys, name)
                .ok_or_else(|| format!("this kernel has no {sys}:{name} tracepoint"))
        };
        Ok(Formats {
            enter: need("raw_syscalls", "sys_enter")?,
            exit: need("raw_syscalls", "sys_exit")?,
            waking: tfs.event("sched", "sched_waking"),
            wakeup: need("sched", "sched_wakeup")?,
            switch: need("sched", "sched_switch")?,
            ipi: tfs.event("ipi", "ipi_send_cpu"),
        })
    }

    fn decode(&self, s: &Sample) -> Option<Event> {
        let id = s.event_id()?;
        let tid = s.tid as i64;
        let kind = if id == self.enter.id {
            Kind::Enter
        } else if id == self.exit.id {
            Kind::Exit
        } else if id == self.wakeup.id {
            Kind::Wakeup(self.wakeup.int(&s.raw, "pid")?)
        } else if id == self.switch.id {
            Kind::Switch {
                prev: self.switch.int(&s.raw, "prev_pid")?,
                next: self.switch.int(&s.raw, "next_pid")?,
            }
        } else if self.waking.as_ref().is_some_and(|w| w.id == id) {
            Kind::Waking(self.waking.as_ref()?.int(&s.raw, "pid")?)
        } else if self.ipi.as_ref().is_some_and(|w| w.id == id) {
            Kind::Ipi
        } else {
            return None;
        };
        Some(Event {
            t: s.time_ns,
            tid,
            kind,
        })
    }
}

/// The threads of process `pid` (of this process when None), less `but`.
fn threads(pid: Option<u32>, but: i64) -> Vec<i64> {
    let dir = match pid {
        Some(p) => format!("/proc/{p}/task"),
        None => "/proc/self/task".into(),
    };
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i64>().ok())
        .filter(|t| *t != but)
        .collect()
}

/// `a || b || …` of `field == tid` for every tid.
fn any_of(fields: &[&str], tids: &[i64]) -> String {
    let mut terms = Vec::new();
    for f in fields {
        for t in tids {
            terms.push(format!("{f} == {t}"));
        }
    }
    terms.join(" || ")
}

/// Why tracing cannot start, in the words a user acts on.
fn refused(e: &ipcperf_sys::SysError) -> String {
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

/// The other side of a traced series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Partner {
    /// A process: every thread of it.
    Process(u32),
    /// One thread of this process (the peer thread of `--mode threads`).
    Thread(i64),
}

impl Partner {
    /// The partner of a started peer: its process when it is one, else its
    /// thread when it is one of ours; None when it is neither (the tracer then
    /// follows every other thread of this process).
    pub(crate) fn of(
        pid: Option<u32>,
        peer: &dyn crate::mode::protocol::PeerHandle,
    ) -> Option<Partner> {
        pid.map(Partner::Process)
            .or_else(|| peer.thread_id().map(Partner::Thread))
    }
}

/// The tracer open on the two sides' threads, ready for one series.
pub(crate) struct Tracing {
    f: Formats,
    tracer: Tracer,
    /// This side's thread, and the other side's.
    a: Vec<i64>,
    b: Vec<i64>,
}

impl Tracing {
    /// Open the events for a series between this thread and the other side (a
    /// process's threads, one thread, or this process's other threads when the
    /// partner is not known: progress, watchdog and load threads among them),
    /// on the CPUs of `placement`. Err(why): it cannot be traced here (no
    /// rights, no tracefs, an event missing): the figures stand as measured.
    pub(crate) fn open(
        placement: &Placement,
        partner: Option<Partner>,
    ) -> std::result::Result<Tracing, String> {
        let tfs = Tracefs::find()?;
        let f = Formats::find(&tfs)?;
        drop(tfs);
        let me = nix::unistd::gettid().as_raw() as i64;
        let a = vec![me];
        let b = match partner {
            Some(Partner::Process(pid)) => threads(Some(pid), me),
            Some(Partner::Thread(tid)) => vec![tid],
            None => threads(None, me),
        };
        let both: Vec<i64> = a.iter().chain(&b).copied().collect();
        let cpus = match (placement.writer_cpu, placement.reader_cpu) {
            (Some(w), Some(r)) if w == r => vec![w],
            (Some(w), Some(r)) => vec![w, r],
            _ => ipcperf_sys::cpu::allowed_cpus()
                .unwrap_or_else(|_| (0..ipcperf_sys::cpu::online_cpus()).collect::<Vec<usize>>()),
        };
        let pages = (RING_BYTES / 4096 / cpus.len().max(1)).clamp(16, 2048);
        let by_tid = any_of(&["common_pid"], &both);
        let mut events = vec![
            (f.enter.id, Some(by_tid.clone())),
            (f.exit.id, Some(by_tid.clone())),
            (f.wakeup.id, Some(any_of(&["pid"], &both))),
            (f.switch.id, Some(any_of(&["prev_pid", "next_pid"], &both))),
        ];
        if let Some(w) = &f.waking {
            events.push((w.id, Some(any_of(&["pid"], &both))));
        }
        if let Some(i) = &f.ipi {
            events.push((i.id, Some(by_tid)));
        }
        let tracer = match Tracer::open(&events, &cpus, pages) {
            Ok(t) => t,
            // A kernel that refuses a filter: every event, sorted out below.
            Err(e) if e.errno == ipcperf_sys::error::Errno::EINVAL => {
                let plain: Vec<(u64, Option<String>)> =
                    events.iter().map(|(i, _)| (*i, None)).collect();
                Tracer::open(&plain, &cpus, pages).map_err(|e| refused(&e))?
            }
            Err(e) => return Err(refused(&e)),
        };
        Ok(Tracing { f, tracer, a, b })
    }

    /// Start sampling, just before the series.
    pub(crate) fn enable(&mut self) -> std::result::Result<(), String> {
        self.tracer.enable().map_err(|e| refused(&e))
    }

    /// Stop sampling, just after it.
    pub(crate) fn disable(&mut self) {
        let _ = self.tracer.disable();
    }

    /// Cut each cycle, given by its start and its length on the monotonic clock,
    /// into parts at the events between, and sum them up; `tare`: the clock's
    /// cost, taken off each cycle.
    pub(crate) fn explain(
        mut self,
        cycles: impl Iterator<Item = (u64, u64)>,
        tare: u64,
    ) -> ExplainRecord {
        let (samples, lost_events) = self.tracer.read();
        let both: Vec<i64> = self.a.iter().chain(&self.b).copied().collect();
        let mine = |t: &i64| both.contains(t);
        let f = &self.f;
        let ev: Vec<Event> = samples
            .iter()
            .filter_map(|x| f.decode(x))
            .filter(|e| match e.kind {
                Kind::Enter | Kind::Exit | Kind::Ipi => mine(&e.tid),
                Kind::Waking(p) | Kind::Wakeup(p) => mine(&p),
                Kind::Switch { prev, next } => mine(&prev) || mine(&next),
            })
            .collect();
        let mut splits = Vec::new();
        let mut traced = Vec::new();
        for (t0, raw) in cycles {
            let t1 = t0 + raw;
            let lo = ev.partition_point(|e| e.t < t0);
            let hi = ev.partition_point(|e| e.t <= t1);
            splits.push(split(&ev[lo..hi], t0, t1, &self.a, &self.b));
            traced.push(raw.saturating_sub(tare));
        }
        let mut missing = Vec::new();
        if f.waking.is_none() {
            missing.push(
                "sched:sched_waking (the send call and the wake-up are one part)".to_string(),
            );
        }
        if f.ipi.is_none() {
            missing.push("ipi:ipi_send_cpu (Linux 6.3+: IPIs are not told apart)".to_string());
        }
        let mut x = super::summarize(
            &splits,
            &traced,
            0,
            ev.len() as u64,
            lost_events,
            f.ipi.is_some(),
            missing,
        );
        // The parts run from clock read to clock read, so their sum holds one
        // read's cost, which the traced cycles have taken off: so does the sum.
        x.sum_median_ns = x.sum_median_ns.saturating_sub(tare);
        x
    }
}
