//! Kernel tracepoints through a private ftrace instance (`instances/ipcperf-<pid>-<seq>-trace`
//! under tracefs): the same events as [`crate::trace::Tracer`] samples through perf, written
//! by the kernel into the instance's own per-CPU ring buffers and read after the series from
//! `per_cpu/cpuN/trace_pipe_raw` (binary sub-buffers, nanosecond stamps on `trace_clock`
//! `mono`, the CLOCK_MONOTONIC that [`crate::clock::now_ns`] reads).
//!
//! Why a second tracer: on some kernels perf gets no event at all from a secondary CPU's idle
//! task (a server woken there by an IPI: its `sched_wakeup` is written in that task's
//! interrupt context), while ftrace's buffers hold it. The instance is a named kernel object:
//! its guard removes it on drop, on Ctrl-C, SIGQUIT, SIGTERM and SIGHUP (through
//! [`crate::cleanup`]); after SIGKILL, [`sweep`] (the next traced run, and `ipcperf clean`)
//! removes the instances whose owner is dead.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::cleanup::{register, Registration, Undo};
use crate::error::{SysError, SysResult};
use crate::names::{owner_pid, pid_alive, unique, PREFIX};
use crate::trace::{Sample, Tracefs};

/// Where a sub-buffer's header keeps its fields (tracefs's `events/header_page`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// Offset and size of `commit` (the bytes of data written, flags in its top bits).
    pub commit_offset: usize,
    pub commit_size: usize,
    /// Where the events begin.
    pub data_offset: usize,
}

impl Default for PageLayout {
    /// The layout of every 64-bit kernel: `u64 timestamp; local_t commit; data`.
    fn default() -> Self {
        PageLayout {
            commit_offset: 8,
            commit_size: 8,
            data_offset: 16,
        }
    }
}

impl PageLayout {
    /// Parse `events/header_page` (None: a field is missing).
    pub fn parse(text: &str) -> Option<PageLayout> {
        let field = |name: &str| {
            let line = text.lines().find(|l| {
                l.split(';')
                    .next()
                    .is_some_and(|d| d.trim_end().ends_with(&format!(" {name}")))
            })?;
            let num = |key: &str| {
                line.split(';')
                    .find_map(|p| p.trim().strip_prefix(key))
                    .and_then(|v| v.trim().parse::<usize>().ok())
            };
            Some((num("offset:")?, num("size:")?))
        };
        let (commit_offset, commit_size) = field("commit")?;
        let (data_offset, _) = field("data")?;
        Some(PageLayout {
            commit_offset,
            commit_size,
            data_offset,
        })
    }
}

/// The flags in `commit`'s top bits (missed events, their count stored).
const COMMIT_FLAGS: u64 = (1 << 31) | (1 << 30);
const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const TS_SHIFT: u32 = 27;

/// Decode the events of one sub-buffer read from CPU `cpu`'s `trace_pipe_raw` into `out`
/// (each record's `common_pid` as its task). Returns the bytes of data the page held.
pub fn parse_page(page: &[u8], layout: &PageLayout, cpu: u32, out: &mut Vec<Sample>) -> usize {
    let u32_at = |at: usize| {
        page.get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_ne_bytes)
    };
    let Some(mut ts) = page
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_ne_bytes)
    else {
        return 0;
    };
    let commit = match layout.commit_size {
        4 => u32_at(layout.commit_offset).map_or(0, u64::from),
        _ => page
            .get(layout.commit_offset..layout.commit_offset + 8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_ne_bytes),
    };
    let len = (commit & !COMMIT_FLAGS & 0xffff_ffff) as usize;
    let start = layout.data_offset;
    let end = (start + len).min(page.len());
    let mut at = start;
    while at + 4 <= end {
        let Some(head) = u32_at(at) else { break };
        let type_len = head & 0x1f;
        let delta = (head >> 5) as u64;
        match type_len {
            TYPE_PADDING => {
                if delta == 0 {
                    break; // the rest of the page is empty
                }
                let Some(n) = u32_at(at + 4) else { break };
                ts += delta;
                at += 4 + n as usize;
            }
            TYPE_TIME_EXTEND => {
                let Some(hi) = u32_at(at + 4) else { break };
                ts += ((hi as u64) << TS_SHIFT) + delta;
                at += 8;
            }
            TYPE_TIME_STAMP => {
                let Some(hi) = u32_at(at + 4) else { break };
                let abs = ((hi as u64) << TS_SHIFT) | delta;
                // The stamp keeps 59 bits; the top ones are the page's.
                ts = abs | (ts & !((1u64 << 59) - 1));
                at += 8;
            }
            _ => {
                let (data, size) = if type_len == 0 {
                    let Some(n) = u32_at(at + 4) else { break };
                    (at + 8, (n as usize).saturating_sub(4))
                } else {
                    (at + 4, type_len as usize * 4)
                };
                ts += delta;
                let Some(raw) = page.get(data..(data + size).min(end)) else {
                    break;
                };
                let pid = raw
                    .get(4..8)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, i32::from_ne_bytes) as u32;
                out.push(Sample {
                    time_ns: ts,
                    cpu,
                    pid,
                    tid: pid,
                    raw: raw.to_vec(),
                });
                at = data + size;
            }
        }
    }
    len
}

/// An instance's directory, shared with its guard's undo: Ctrl-C's cleanup
/// (another thread) removes the instance only between two of its owner's
/// operations, never while one of its files is open.
///
/// No file of the instance stays open outside those operations: the cleanup
/// runs in a thread with a descriptor table of its own (see
/// [`crate::signal::cleanup_on_interrupt`]), so it could not close a buffer
/// the measuring thread holds, and an instance with an open buffer cannot be
/// removed (EBUSY).
#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    gone: bool,
}

impl Inner {
    /// Stop it and remove it (an instance whose files were just closed can be
    /// busy for a moment).
    fn remove(&mut self) {
        if self.gone {
            return;
        }
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        // A file of the instance open elsewhere for a moment (the measuring
        // thread descheduled on a loaded machine) makes it busy: up to 1 s.
        for _ in 0..500 {
            match std::fs::remove_dir(&self.dir) {
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(std::time::Duration::from_millis(2))
                }
                _ => break,
            }
        }
        self.gone = true;
    }
}

type Shared = std::sync::Arc<std::sync::Mutex<Inner>>;

fn lock(s: &Shared) -> std::sync::MutexGuard<'_, Inner> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

/// A private ftrace instance with events enabled on some CPUs (tracing off until
/// [`Instance::enable`]); removed on drop.
///
/// Only files that hold the instance while open are written (tracing_on,
/// trace_clock, buffer sizes, cpumask, each event's filter and enable): an
/// `options/*` file does not hold it on some kernels (6.18), and a write to one
/// racing the instance's removal dereferences a freed buffer in the kernel,
/// which then holds tracing's locks for good.
#[derive(Debug)]
pub struct Instance {
    inner: Shared,
    /// The traced CPUs, whose buffers [`Instance::read`] opens and closes.
    cpus: Vec<usize>,
    dir: PathBuf,
    layout: PageLayout,
    page: usize,
    _reg: Registration,
    /// Keeps a detached tracefs mount readable while the instance lives.
    _tfs: Tracefs,
}

fn write(path: &Path, what: &str) -> SysResult<()> {
    std::fs::write(path, what)
        .map_err(|e| SysError::from_io("write", format!("{what:?} to {}", path.display()), &e))
}

/// `tracing_cpumask`'s form: hexadecimal words of 32 CPUs, the highest first, by commas.
fn cpumask(cpus: &[usize]) -> String {
    let top = cpus.iter().max().copied().unwrap_or(0);
    let words: Vec<String> = (0..=top / 32)
        .rev()
        .map(|w| {
            let m = cpus
                .iter()
                .filter(|c| **c / 32 == w)
                .fold(0u32, |m, c| m | 1 << (c % 32));
            format!("{m:08x}")
        })
        .collect();
    words.join(",")
}

impl Instance {
    /// Make the instance, its clock `mono`, `kb` KiB of buffer on each CPU of `cpus` (and the
    /// least on the others), and enable each event `(sys, name, filter)` with its filter.
    pub fn create(
        tfs: Tracefs,
        events: &[(&str, &str, Option<String>)],
        cpus: &[usize],
        kb: usize,
    ) -> SysResult<Instance> {
        let root = tfs.dir().to_path_buf();
        let dir = root.join("instances").join(unique("trace"));
        let inner: Shared = std::sync::Arc::new(std::sync::Mutex::new(Inner {
            dir: dir.clone(),
            gone: false,
        }));
        let g = lock(&inner);
        // Made and registered with no interruption's sweep between the two.
        let making = crate::cleanup::creating();
        std::fs::create_dir(&dir)
            .map_err(|e| SysError::from_io("mkdir", dir.display().to_string(), &e))?;
        let undo = std::sync::Arc::clone(&inner);
        let reg = register(Undo::Call(Box::new(move || lock(&undo).remove())));
        drop(making);
        let layout = std::fs::read_to_string(root.join("events/header_page"))
            .ok()
            .and_then(|t| PageLayout::parse(&t))
            .unwrap_or_default();
        let page = std::fs::read_to_string(dir.join("buffer_subbuf_size_kb"))
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .map_or(4096, |k| k * 1024)
            .max(4096);
        let d = dir.clone();
        let set_up = || -> SysResult<()> {
            write(&d.join("tracing_on"), "0")?;
            write(&d.join("trace_clock"), "mono")?;
            write(&d.join("buffer_size_kb"), "4")?;
            for c in cpus {
                write(
                    &d.join(format!("per_cpu/cpu{c}/buffer_size_kb")),
                    &kb.to_string(),
                )?;
            }
            write(&d.join("tracing_cpumask"), &cpumask(cpus))?;
            for (sys, name, filter) in events {
                let e = d.join("events").join(sys).join(name);
                if let Some(f) = filter {
                    write(&e.join("filter"), f)?;
                }
                write(&e.join("enable"), "1")?;
            }
            // Each traced CPU's buffer is there to be read.
            for &c in cpus {
                let p = d.join(format!("per_cpu/cpu{c}/trace_pipe_raw"));
                if !p.exists() {
                    return Err(SysError::new(
                        "open",
                        p.display().to_string(),
                        crate::error::Errno::ENOENT,
                    ));
                }
            }
            Ok(())
        };
        // Set up under the lock: the cleanup removes it before or after, not during.
        let r = set_up();
        drop(g);
        let inst = Instance {
            inner,
            cpus: cpus.to_vec(),
            dir,
            layout,
            page,
            _reg: reg,
            _tfs: tfs,
        };
        r.map(|_| inst)
    }

    /// The instance's directory (its name is ours: `ipcperf-<pid>-…`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn tracing(&self, on: &str) -> SysResult<()> {
        let g = lock(&self.inner);
        if g.gone {
            return Err(SysError::new(
                "write",
                format!("tracing_on of {} (removed)", self.dir.display()),
                crate::error::Errno::ENOENT,
            ));
        }
        write(&g.dir.join("tracing_on"), on)
    }

    /// Start writing events.
    pub fn enable(&self) -> SysResult<()> {
        self.tracing("1")
    }

    /// Stop writing events (what was written stays to be read).
    pub fn disable(&self) -> SysResult<()> {
        self.tracing("0")
    }

    /// Every event in the buffers, in time order, and how many the kernel dropped for
    /// want of room (each traced CPU's `stats`: dropped events and overrun).
    pub fn read(&mut self) -> (Vec<Sample>, u64) {
        let mut out = Vec::new();
        let mut buf = vec![0u8; self.page];
        // Held while a buffer is open: the cleanup waits for it to close.
        let g = lock(&self.inner);
        let mut lost = 0;
        if g.gone {
            return (out, lost);
        }
        let dir = g.dir.clone();
        for cpu in &self.cpus {
            let Ok(mut f) = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(dir.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw")))
            else {
                continue;
            };
            // Each read gives one sub-buffer; empty (EAGAIN or 0) ends the CPU's.
            while let Ok(n) = f.read(&mut buf) {
                if n == 0 {
                    break;
                }
                parse_page(&buf[..n], &self.layout, *cpu as u32, &mut out);
            }
            let stats = std::fs::read_to_string(dir.join(format!("per_cpu/cpu{cpu}/stats")))
                .unwrap_or_default();
            for l in stats.lines() {
                if let Some(v) = l
                    .strip_prefix("dropped events:")
                    .or_else(|| l.strip_prefix("overrun:"))
                {
                    lost += v.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
        out.sort_by_key(|s| s.time_ns);
        (out, lost)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        lock(&self.inner).remove();
    }
}

/// Our instances whose run is dead (a SIGKILL left them): their paths and owners' uids.
pub fn orphans(tfs: &Tracefs) -> Vec<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(tfs.dir().join("instances"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = owner_pid(&name).filter(|_| name.starts_with(PREFIX))?;
            let dead = pid != std::process::id() as i32 && !pid_alive(pid);
            let meta = std::fs::symlink_metadata(e.path()).ok()?;
            (dead && meta.is_dir()).then(|| (e.path(), meta.uid()))
        })
        .collect()
}

/// Remove our dead runs' instances; returns how many went.
pub fn sweep(tfs: &Tracefs) -> usize {
    orphans(tfs)
        .into_iter()
        .filter(|(p, _)| std::fs::remove_dir(p).is_ok())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;
";

    #[test]
    fn the_header_page_gives_commit_and_data() {
        assert_eq!(PageLayout::parse(HEADER), Some(PageLayout::default()));
        assert_eq!(PageLayout::parse("nothing"), None);
    }

    fn event(type_len: u32, delta: u32, words: &[u32]) -> Vec<u8> {
        let mut v = ((delta << 5) | type_len).to_ne_bytes().to_vec();
        for w in words {
            v.extend_from_slice(&w.to_ne_bytes());
        }
        v
    }

    /// A record: common_type, flags, preempt count, common_pid, then a payload word.
    fn record(id: u16, pid: i32, extra: u32) -> Vec<u32> {
        vec![id as u32, pid as u32, extra]
    }

    #[test]
    fn a_page_gives_each_event_its_stamp_task_and_record() {
        let mut data = Vec::new();
        data.extend(event(3, 100, &record(7, 42, 9)));
        // A time extend of 1 << 27 + 5 ns, then a long record (type_len 0).
        data.extend(event(TYPE_TIME_EXTEND, 5, &[1]));
        let mut long = vec![16u32];
        long.extend(record(8, 43, 10));
        data.extend(event(0, 7, &long));
        // Padding with a delta (a discarded event), then one more record.
        data.extend(event(TYPE_PADDING, 2, &[4]));
        data.extend(event(3, 1, &record(7, 44, 11)));
        let mut page = 1_000u64.to_ne_bytes().to_vec();
        page.extend((data.len() as u64 | 1 << 31).to_ne_bytes());
        page.extend(&data);
        page.resize(4096, 0);
        let mut out = Vec::new();
        let n = parse_page(&page, &PageLayout::default(), 3, &mut out);
        assert_eq!(n, data.len());
        let stamps: Vec<u64> = out.iter().map(|s| s.time_ns).collect();
        let t1 = 1_100;
        let t2 = t1 + (1 << 27) + 5 + 7;
        assert_eq!(stamps, vec![t1, t2, t2 + 2 + 1]);
        assert_eq!(
            out.iter().map(|s| s.tid).collect::<Vec<_>>(),
            vec![42, 43, 44]
        );
        assert_eq!(out[1].event_id(), Some(8));
        assert_eq!(out[1].raw.len(), 12);
        assert!(out.iter().all(|s| s.cpu == 3));
        // A page cut short never reads past its end.
        let mut few = Vec::new();
        parse_page(&page[..30], &PageLayout::default(), 0, &mut few);
        assert!(few.len() <= 1);
    }

    #[test]
    fn an_absolute_stamp_replaces_the_running_one() {
        let mut data = event(TYPE_TIME_STAMP, 3, &[2]);
        data.extend(event(3, 4, &record(1, 5, 0)));
        let mut page = 7u64.to_ne_bytes().to_vec();
        page.extend((data.len() as u64).to_ne_bytes());
        page.extend(&data);
        let mut out = Vec::new();
        parse_page(&page, &PageLayout::default(), 0, &mut out);
        assert_eq!(out[0].time_ns, (2 << 27 | 3) + 4);
    }

    fn tracefs_or_skip() -> Option<Tracefs> {
        match Tracefs::find().and_then(|t| t.readable().and(t.answers()).map(|_| t)) {
            Ok(t) if t.dir().join("instances").is_dir() => Some(t),
            Ok(_) => {
                eprintln!("skipped: this tracefs has no instances");
                None
            }
            Err(why) => {
                eprintln!("skipped: {why}");
                None
            }
        }
    }

    /// As root, the instance records this thread's own system calls, stamped on the
    /// clock `now_ns` reads, and is gone when dropped.
    #[test]
    fn an_instance_records_on_the_monotonic_clock_and_goes() {
        let Some(tfs) = tracefs_or_skip() else { return };
        let tid = nix::unistd::gettid().as_raw();
        let cpu = crate::cpu::current_cpu().unwrap_or(0);
        let _pin = crate::cpu::PinGuard::pin(Some(cpu)).unwrap();
        let filter = format!("common_pid == {tid}");
        let mut inst = match Instance::create(
            tfs,
            &[("raw_syscalls", "sys_enter", Some(filter))],
            &[cpu],
            256,
        ) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("skipped: {e}");
                return;
            }
        };
        let dir = inst.dir().to_path_buf();
        assert!(dir.is_dir());
        let t0 = crate::clock::now_ns();
        inst.enable().unwrap();
        for _ in 0..10 {
            let _ = nix::unistd::getppid();
        }
        inst.disable().unwrap();
        let t1 = crate::clock::now_ns();
        let (samples, lost) = inst.read();
        assert_eq!(lost, 0);
        let ours: Vec<&Sample> = samples.iter().filter(|s| s.tid == tid as u32).collect();
        assert!(ours.len() >= 10, "{} events", ours.len());
        assert!(ours
            .iter()
            .all(|s| s.time_ns > t0 && s.time_ns < t1 && s.cpu as usize == cpu));
        assert!(inst.read().0.is_empty(), "read takes what the buffers held");
        drop(inst);
        assert!(!dir.exists(), "{} left behind", dir.display());
    }

    /// An instance of a dead run is swept; a live run's is not.
    #[test]
    fn sweep_removes_only_dead_runs_instances() {
        let Some(tfs) = tracefs_or_skip() else { return };
        // A pid above pid_max is never alive.
        let dead = tfs.dir().join("instances/ipcperf-99999999-0-trace");
        if std::fs::create_dir(&dead).is_err() {
            eprintln!("skipped: cannot make an instance");
            return;
        }
        let live = Instance::create(Tracefs::find().unwrap(), &[], &[0], 4).unwrap();
        assert!(orphans(&tfs).iter().any(|(p, _)| *p == dead));
        assert!(sweep(&tfs) >= 1);
        assert!(!dead.exists());
        assert!(live.dir().is_dir(), "a live run's instance stays");
    }

    #[test]
    fn the_cpumask_is_words_of_32_highest_first() {
        assert_eq!(cpumask(&[0, 1]), "00000003");
        assert_eq!(cpumask(&[1, 33]), "00000002,00000002");
        assert_eq!(cpumask(&[64]), "00000001,00000000,00000000");
    }
}
