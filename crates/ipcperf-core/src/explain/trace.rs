//! Tracing a series: the scheduler's and the system calls' tracepoints opened on
//! the CPUs the two sides run on, filtered to their threads, enabled around one
//! series whose every cycle's start is kept, and the events cut into parts per
//! cycle (a round trip, or a sync primitive's set/clear). Used by the round-trip
//! runner and by sync.

use ipcperf_sys::trace::{EventFormat, Tracefs};

use super::formats::Formats;
use super::split::{split, Event, Kind};
use super::tracer::{choose, Backend, Ev};
use super::ExplainRecord;
use crate::kind::Placement;

/// Buffer for every CPU traced together (perf's rings, tracefs's buffers).
const RING_BYTES: usize = 64 << 20;

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
    tracer: Backend,
    /// Which tracer, and why.
    kind: (&'static str, String),
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
        let by_tid = any_of(&["common_pid"], &both);
        let ev = |sys, name, f: &EventFormat, filter: String| Ev {
            sys,
            name,
            id: f.id,
            filter: Some(filter),
        };
        let mut events = vec![
            ev("raw_syscalls", "sys_enter", &f.enter, by_tid.clone()),
            ev("raw_syscalls", "sys_exit", &f.exit, by_tid.clone()),
            ev("sched", "sched_wakeup", &f.wakeup, any_of(&["pid"], &both)),
            ev(
                "sched",
                "sched_switch",
                &f.switch,
                any_of(&["prev_pid", "next_pid"], &both),
            ),
        ];
        if let Some(w) = &f.waking {
            events.push(ev("sched", "sched_waking", w, any_of(&["pid"], &both)));
        }
        if let Some(i) = &f.ipi {
            events.push(ev("ipi", "ipi_send_cpu", i, by_tid));
        }
        let pair = match (placement.writer_cpu, placement.reader_cpu) {
            (Some(w), Some(r)) => (w, r),
            _ => {
                let here = ipcperf_sys::cpu::current_cpu().unwrap_or(0);
                let other = cpus.iter().copied().find(|c| *c != here).unwrap_or(here);
                (here, other)
            }
        };
        let (which, why) = choose(pair, &f);
        let tracer = Backend::open(which, &events, &cpus, RING_BYTES)?;
        let kind = (which.name(), why);
        Ok(Tracing {
            f,
            tracer,
            kind,
            a,
            b,
        })
    }

    /// Start sampling, just before the series.
    pub(crate) fn enable(&mut self) -> std::result::Result<(), String> {
        self.tracer.enable()
    }

    /// Stop sampling, just after it.
    pub(crate) fn disable(&mut self) {
        self.tracer.disable();
    }

    /// Cut each cycle, given by its start and its length on the monotonic clock,
    /// into parts at the events between, and sum them up; `tare`: the clock's
    /// cost, taken off each cycle.
    /// The two sides' events, in time order, and how many the kernel lost.
    fn events(&mut self) -> (Vec<Event>, u64) {
        let (samples, lost_events) = self.tracer.read();
        let both: Vec<i64> = self.a.iter().chain(&self.b).copied().collect();
        let mine = |t: &i64| both.contains(t);
        let f = &self.f;
        let ev = samples
            .iter()
            .filter_map(|x| f.decode(x))
            .filter(|e| match e.kind {
                Kind::Enter | Kind::Exit | Kind::Ipi => mine(&e.tid),
                Kind::Waking(p) | Kind::Wakeup(p) => mine(&p),
                Kind::Switch { prev, next } => mine(&prev) || mine(&next),
            })
            .collect();
        (ev, lost_events)
    }

    /// What this kernel lacks, said in the record.
    fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        if self.f.waking.is_none() {
            missing.push(
                "sched:sched_waking (the send call and the wake-up are one part)".to_string(),
            );
        }
        if self.f.ipi.is_none() {
            missing.push("ipi:ipi_send_cpu (Linux 6.3+: IPIs are not told apart)".to_string());
        }
        missing
    }

    /// A traced stream series of `blocks` blocks, `span` its start and length:
    /// each side's time per block (this thread writes, the other side reads).
    pub(crate) fn explain_stream(mut self, span: (u64, u64), blocks: u64) -> ExplainRecord {
        let (ev, lost_events) = self.events();
        let mut x = super::stream::summarize(&ev, span, blocks, &self.a, &self.b);
        x.events = ev.len() as u64;
        x.lost_events = lost_events;
        x.missing_events = self.missing();
        x.tracer = self.kind.0.to_string();
        x.tracer_reason = self.kind.1;
        x
    }

    pub(crate) fn explain(
        mut self,
        cycles: impl Iterator<Item = (u64, u64)>,
        tare: u64,
    ) -> ExplainRecord {
        let (ev, lost_events) = self.events();
        let f = &self.f;
        let mut splits = Vec::new();
        let mut traced = Vec::new();
        for (t0, raw) in cycles {
            let t1 = t0 + raw;
            let lo = ev.partition_point(|e| e.t < t0);
            let hi = ev.partition_point(|e| e.t <= t1);
            splits.push(split(&ev[lo..hi], t0, t1, &self.a, &self.b));
            traced.push(raw.saturating_sub(tare));
        }
        let missing = self.missing();
        let modes = super::modes::modes(&splits, &traced);
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
        x.modes = modes;
        x.tracer = self.kind.0.to_string();
        x.tracer_reason = self.kind.1;
        x
    }
}
