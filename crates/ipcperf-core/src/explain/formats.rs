//! The tracepoints `--explain` reads, found in tracefs, and each sample decoded
//! into the event the split needs.

use ipcperf_sys::trace::{EventFormat, Sample, Tracefs};

use super::split::{Event, Kind};

/// The tracepoints and what each becomes.
pub(crate) struct Formats {
    pub(crate) enter: EventFormat,
    pub(crate) exit: EventFormat,
    pub(crate) waking: Option<EventFormat>,
    pub(crate) wakeup: EventFormat,
    pub(crate) switch: EventFormat,
    pub(crate) ipi: Option<EventFormat>,
}

impl Formats {
    pub(crate) fn find(tfs: &Tracefs) -> std::result::Result<Formats, String> {
        tfs.readable()?;
        tfs.answers()?;
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

    pub(crate) fn decode(&self, s: &Sample) -> Option<Event> {
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
