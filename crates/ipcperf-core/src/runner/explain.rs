//! The traced series: the tracepoints opened on the CPUs the two sides run on,
//! filtered to their threads, one series of round trips with each one's start
//! kept, and the events cut into parts per round trip.

use ipcperf_sys::trace::{EventFormat, Sample, Tracefs, Tracer};

use crate::error::Result;
use crate::explain::split::{split, Event, Kind};
use crate::explain::ExplainRecord;
use crate::mechanism::Mechanism;
use crate::workload::roundtrip::Recorded;
use crate::workload::roundtrip_session::RoundTripSession;

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

/// Run one traced series of `n` round trips on `s` and cut it into parts.
/// Ok(Err(why)): it could not be traced (no rights, no tracefs, an event
/// missing); the case's figures stand as measured. Err: the series failed.
pub(crate) fn traced<M: Mechanism>(
    s: &mut RoundTripSession<M>,
    n: u64,
    budget_ns: u64,
) -> Result<std::result::Result<ExplainRecord, String>> {
    let tfs = match Tracefs::find() {
        Ok(t) => t,
        Err(why) => return Ok(Err(why)),
    };
    let f = match Formats::find(&tfs) {
        Ok(f) => f,
        Err(why) => return Ok(Err(why)),
    };
    drop(tfs);
    let me = nix::unistd::gettid().as_raw() as i64;
    let a = vec![me];
    let b = threads(s.peer_pid(), me);
    let both: Vec<i64> = a.iter().chain(&b).copied().collect();
    let spec = &s.spec;
    let cpus = match (spec.placement.writer_cpu, spec.placement.reader_cpu) {
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
    let mut tracer = match Tracer::open(&events, &cpus, pages) {
        Ok(t) => t,
        // A kernel that refuses a filter: every event, sorted out below.
        Err(e) if e.errno == ipcperf_sys::error::Errno::EINVAL => {
            let plain: Vec<(u64, Option<String>)> =
                events.iter().map(|(i, _)| (*i, None)).collect();
            match Tracer::open(&plain, &cpus, pages) {
                Ok(t) => t,
                Err(e) => return Ok(Err(refused(&e))),
            }
        }
        Err(e) => return Ok(Err(refused(&e))),
    };
    let mut rec = Recorded::new(n);
    if let Err(e) = tracer.enable() {
        return Ok(Err(refused(&e)));
    }
    let outcome = s.recorded_series(n, budget_ns, &mut rec);
    let _ = tracer.disable();
    let outcome = outcome?;
    let (samples, lost_events) = tracer.read();
    drop(tracer);
    if outcome.ping.lost > 0 {
        return Ok(Err(format!(
            "{} of the traced round trips were lost: the parts need every one",
            outcome.ping.lost
        )));
    }
    let mine = |t: &i64| both.contains(t);
    let ev: Vec<Event> = samples
        .iter()
        .filter_map(|x| f.decode(x))
        .filter(|e| match e.kind {
            Kind::Enter | Kind::Exit | Kind::Ipi => mine(&e.tid),
            Kind::Waking(p) | Kind::Wakeup(p) => mine(&p),
            Kind::Switch { prev, next } => mine(&prev) || mine(&next),
        })
        .collect();
    let tare = s.clock_cost_ns;
    let mut splits = Vec::with_capacity(s.samples.len());
    for (i, &raw) in s.samples.iter().enumerate() {
        let Some(t0) = rec.origins.get(i).map(|c| c.get()) else {
            break;
        };
        let t1 = t0 + raw;
        let lo = ev.partition_point(|e| e.t < t0);
        let hi = ev.partition_point(|e| e.t <= t1);
        splits.push(split(&ev[lo..hi], t0, t1, &a, &b));
    }
    let traced: Vec<u64> = s.samples.iter().map(|x| x.saturating_sub(tare)).collect();
    let mut missing = Vec::new();
    if f.waking.is_none() {
        missing.push("sched:sched_waking (the send call and the wake-up are one part)".to_string());
    }
    if f.ipi.is_none() {
        missing.push("ipi:ipi_send_cpu (Linux 6.3+: IPIs are not told apart)".to_string());
    }
    let mut x = crate::explain::summarize(
        &splits,
        &traced,
        0,
        ev.len() as u64,
        lost_events,
        f.ipi.is_some(),
        missing,
    );
    // The parts run from clock read to clock read, so their sum holds one
    // read's cost, which the traced round trips have taken off: so does the sum.
    x.sum_median_ns = x.sum_median_ns.saturating_sub(tare);
    Ok(Ok(x))
}
