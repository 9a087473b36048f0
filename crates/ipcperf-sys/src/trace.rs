//! Kernel tracepoints through `perf_event_open(2)`: one sampling event per
//! tracepoint and CPU, every event of a CPU written to that CPU's one ring
//! buffer (`PERF_EVENT_IOC_SET_OUTPUT`), each sample stamped on CLOCK_MONOTONIC
//! (`use_clockid`), so that its time is comparable with [`crate::clock::now_ns`]
//! to the nanosecond. The descriptors and their rings are the whole state: they
//! vanish with the process, so a killed run leaves nothing enabled.
//!
//! Why not a tracefs instance: its text prints microseconds, its binary pages
//! need the ring-buffer page format parsed, and an instance outlives a killed
//! process (it would need a guard and `ipcperf clean`). tracefs is only read
//! here: each event's id and field layout (`events/SYS/NAME/{id,format}`); where
//! it is not mounted it is mounted on a fresh directory, opened, and detached at
//! once (read through the open descriptor), so nothing stays mounted.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::{Errno, SysError, SysResult};
pub use crate::tracefs::{EventFormat, Field, Tracefs};

/// `struct perf_event_attr` up to `sample_max_stack` (PERF_ATTR_SIZE_VER5, 112
/// bytes: every kernel since 4.8 takes it).
#[repr(C)]
#[derive(Default)]
pub(crate) struct Attr {
    pub(crate) type_: u32,
    pub(crate) size: u32,
    pub(crate) config: u64,
    pub(crate) sample_period: u64,
    pub(crate) sample_type: u64,
    pub(crate) read_format: u64,
    pub(crate) flags: u64,
    pub(crate) wakeup_events: u32,
    pub(crate) bp_type: u32,
    pub(crate) config1: u64,
    pub(crate) config2: u64,
    pub(crate) branch_sample_type: u64,
    pub(crate) sample_regs_user: u64,
    pub(crate) sample_stack_user: u32,
    pub(crate) clockid: i32,
    pub(crate) sample_regs_intr: u64,
    pub(crate) aux_watermark: u32,
    pub(crate) sample_max_stack: u16,
    pub(crate) reserved_2: u16,
}

const PERF_TYPE_TRACEPOINT: u32 = 2;
const SAMPLE_TID: u64 = 1 << 1;
const SAMPLE_TIME: u64 = 1 << 2;
const SAMPLE_CPU: u64 = 1 << 7;
const SAMPLE_RAW: u64 = 1 << 10;
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_USE_CLOCKID: u64 = 1 << 25;
const RECORD_LOST: u32 = 2;
const RECORD_SAMPLE: u32 = 9;
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// One sample of a tracepoint: when (CLOCK_MONOTONIC ns), where, which task,
/// and the tracepoint's raw record (its `common_type` first: the event's id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub time_ns: u64,
    pub cpu: u32,
    pub pid: u32,
    pub tid: u32,
    pub raw: Vec<u8>,
}

impl Sample {
    /// The tracepoint id this sample is of.
    pub fn event_id(&self) -> Option<u64> {
        Some(u16::from_ne_bytes(self.raw.get(..2)?.try_into().ok()?) as u64)
    }
}

/// A CPU's ring: the mapping (a metadata page, then 2^n data pages).
struct Ring {
    base: *mut u8,
    len: usize,
    page: usize,
}

// SAFETY: the ring is memory mapped for this process; only the thread holding
// the Tracer reads it, and the kernel writes it under the head/tail protocol.
unsafe impl Send for Ring {}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: base/len are the mapping made in `Tracer::open`, unmapped once.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Sampling tracepoints on a set of CPUs, read after the fact.
pub struct Tracer {
    fds: Vec<OwnedFd>,
    rings: Vec<Ring>,
}

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer")
            .field("events", &self.fds.len())
            .field("rings", &self.rings.len())
            .finish()
    }
}

fn perf_event_open(attr: &Attr, cpu: i32) -> SysResult<OwnedFd> {
    // SAFETY: attr is a valid perf_event_attr of the size it states; pid -1 with
    // a CPU samples every task there; no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const Attr,
            -1 as libc::pid_t,
            cpu,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(SysError::new(
            "perf_event_open",
            format!("tracepoint {} on CPU {cpu}", attr.config),
            Errno::last(),
        ));
    }
    // SAFETY: a descriptor the kernel just returned, owned from here on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn ioctl(fd: &OwnedFd, req: libc::c_ulong, arg: libc::c_ulong, what: &str) -> SysResult<()> {
    // SAFETY: perf's ioctls take an integer or a pointer the caller keeps alive.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) };
    if r < 0 {
        return Err(SysError::new("ioctl", what.to_string(), Errno::last()));
    }
    Ok(())
}

impl Tracer {
    /// Sample every event of `events` (a tracepoint id and an optional filter in
    /// tracefs's syntax, e.g. `common_pid == 12`) on each CPU of `cpus`, into a
    /// ring of `pages` (a power of two) data pages per CPU. Disabled until
    /// [`Tracer::enable`].
    pub fn open(
        events: &[(u64, Option<String>)],
        cpus: &[usize],
        pages: usize,
    ) -> SysResult<Tracer> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let pages = pages.next_power_of_two().max(1);
        let mut fds: Vec<OwnedFd> = Vec::new();
        let mut rings = Vec::new();
        for &cpu in cpus {
            let mut first: Option<usize> = None;
            for (id, filter) in events {
                let attr = Attr {
                    type_: PERF_TYPE_TRACEPOINT,
                    size: std::mem::size_of::<Attr>() as u32,
                    config: *id,
                    sample_period: 1,
                    sample_type: SAMPLE_TID | SAMPLE_TIME | SAMPLE_CPU | SAMPLE_RAW,
                    flags: FLAG_DISABLED | FLAG_USE_CLOCKID,
                    // No wake-up of a reader per sample (an irq_work, a VM exit
                    // on a guest): the rings are read after the series.
                    wakeup_events: 0,
                    clockid: libc::CLOCK_MONOTONIC,
                    ..Attr::default()
                };
                let fd = perf_event_open(&attr, cpu as i32)?;
                if let Some(f) = filter {
                    let c = std::ffi::CString::new(f.as_str())
                        .map_err(|_| SysError::new("filter", f.clone(), Errno::EINVAL))?;
                    ioctl(&fd, IOC_SET_FILTER, c.as_ptr() as libc::c_ulong, f)?;
                }
                match first {
                    None => {
                        let len = page * (pages + 1);
                        // SAFETY: a fresh shared mapping of the event's ring.
                        let base = unsafe {
                            libc::mmap(
                                std::ptr::null_mut(),
                                len,
                                libc::PROT_READ | libc::PROT_WRITE,
                                libc::MAP_SHARED,
                                fd.as_raw_fd(),
                                0,
                            )
                        };
                        if base == libc::MAP_FAILED {
                            return Err(SysError::new(
                                "mmap",
                                format!("perf ring of {pages} pages"),
                                Errno::last(),
                            ));
                        }
                        rings.push(Ring {
                            base: base as *mut u8,
                            len,
                            page,
                        });
                        first = Some(fds.len());
                    }
                    Some(i) => {
                        let target = fds[i].as_raw_fd() as libc::c_ulong;
                        ioctl(&fd, IOC_SET_OUTPUT, target, "PERF_EVENT_IOC_SET_OUTPUT")?;
                    }
                }
                fds.push(fd);
            }
        }
        Ok(Tracer { fds, rings })
    }

    /// Start sampling.
    pub fn enable(&self) -> SysResult<()> {
        for fd in &self.fds {
            ioctl(fd, IOC_ENABLE, 0, "PERF_EVENT_IOC_ENABLE")?;
        }
        Ok(())
    }

    /// Stop sampling (what was sampled stays to be read).
    pub fn disable(&self) -> SysResult<()> {
        for fd in &self.fds {
            ioctl(fd, IOC_DISABLE, 0, "PERF_EVENT_IOC_DISABLE")?;
        }
        Ok(())
    }

    /// Every sample in the rings, in time order, and how many the kernel lost
    /// for want of room.
    pub fn read(&mut self) -> (Vec<Sample>, u64) {
        let mut out = Vec::new();
        let mut lost = 0;
        for r in &self.rings {
            lost += read_ring(r, &mut out);
        }
        out.sort_by_key(|s| s.time_ns);
        (out, lost)
    }
}

/// Take what a ring holds (records between its tail and head), leaving it empty.
fn read_ring(r: &Ring, out: &mut Vec<Sample>) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    let data_len = r.len - r.page;
    // SAFETY: data_head and data_tail are u64 at offsets 1024 and 1032 of the
    // metadata page, which is mapped read-write and 8-byte aligned.
    let (head, tail) = unsafe {
        (
            &*(r.base.add(1024) as *const AtomicU64),
            &*(r.base.add(1032) as *const AtomicU64),
        )
    };
    let end = head.load(Ordering::Acquire);
    let mut pos = tail.load(Ordering::Relaxed);
    // SAFETY: the data area is the mapping after the metadata page.
    let data = unsafe { std::slice::from_raw_parts(r.base.add(r.page), data_len) };
    // One record's bytes, in one piece even where it wraps round the ring.
    let copy = |p: u64, n: usize| -> Vec<u8> {
        let s = (p % data_len as u64) as usize;
        let n = n.min(data_len);
        let mut v = data[s..(s + n).min(data_len)].to_vec();
        v.extend_from_slice(&data[..n - v.len()]);
        v
    };
    let u32_at = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .and_then(|x| x.try_into().ok())
            .map_or(0, u32::from_ne_bytes)
    };
    let u64_at = |b: &[u8], at: usize| {
        b.get(at..at + 8)
            .and_then(|x| x.try_into().ok())
            .map_or(0, u64::from_ne_bytes)
    };
    let mut lost = 0;
    while pos < end {
        let header = copy(pos, 8);
        let size = u16::from_ne_bytes([header[6], header[7]]) as usize;
        if size < 8 {
            break;
        }
        let rec = copy(pos, size);
        match u32_at(&rec, 0) {
            RECORD_SAMPLE => {
                // After the header: TID (pid, tid), TIME, CPU (cpu, res), RAW
                // (its size, then the tracepoint's record).
                let raw_len = (u32_at(&rec, 32) as usize).min(size.saturating_sub(36));
                out.push(Sample {
                    time_ns: u64_at(&rec, 16),
                    cpu: u32_at(&rec, 24),
                    pid: u32_at(&rec, 8),
                    tid: u32_at(&rec, 12),
                    raw: rec.get(36..36 + raw_len).unwrap_or_default().to_vec(),
                });
            }
            RECORD_LOST => lost += u64_at(&rec, 16),
            _ => {}
        }
        pos += size as u64;
    }
    tail.store(end, Ordering::Release);
    lost
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As root, a tracepoint samples this thread's own system calls, stamped
    /// on the clock `now_ns` reads; the rings are empty afterwards.
    #[test]
    fn sys_enter_samples_are_on_the_monotonic_clock() {
        let tfs = match Tracefs::find().and_then(|t| t.answers().map(|_| t)) {
            Ok(t) => t,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        };
        let Some(enter) = tfs.event("raw_syscalls", "sys_enter") else {
            eprintln!("skipped: no raw_syscalls:sys_enter here");
            return;
        };
        let tid = nix::unistd::gettid().as_raw();
        let cpu = crate::cpu::current_cpu().unwrap_or(0);
        let _pin = crate::cpu::PinGuard::pin(Some(cpu)).unwrap();
        let filter = format!("common_pid == {tid}");
        let mut t = match Tracer::open(&[(enter.id, Some(filter))], &[cpu], 16) {
            Ok(t) => t,
            Err(e) if matches!(e.errno, Errno::EACCES | Errno::EPERM) => {
                eprintln!("skipped: {e} (needs root or CAP_PERFMON)");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let t0 = crate::clock::now_ns();
        t.enable().unwrap();
        for _ in 0..10 {
            let _ = nix::unistd::getppid();
            let _ = std::fs::metadata("/");
        }
        t.disable().unwrap();
        let t1 = crate::clock::now_ns();
        let (samples, lost) = t.read();
        assert_eq!(lost, 0);
        let ours: Vec<&Sample> = samples.iter().filter(|s| s.tid == tid as u32).collect();
        assert!(ours.len() >= 10, "{} samples", ours.len());
        for s in &ours {
            assert!(
                s.time_ns > t0 && s.time_ns < t1,
                "{} not in {t0}..{t1}",
                s.time_ns
            );
            assert_eq!(s.event_id(), Some(enter.id));
            assert_eq!(s.cpu as usize, cpu);
        }
        assert!(t.read().0.is_empty(), "read takes what the rings held");
    }
}
