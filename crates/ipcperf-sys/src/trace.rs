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

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::error::{Errno, SysError, SysResult};

/// One field of a tracepoint's record: where it lies in the raw data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
    pub signed: bool,
}

/// A tracepoint as tracefs describes it: its id (the `config` of the event,
/// and the `common_type` of each of its records) and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    pub id: u64,
    pub fields: BTreeMap<String, Field>,
}

impl EventFormat {
    /// Parse tracefs's `format` text and `id`.
    pub fn parse(id: &str, format: &str) -> Option<EventFormat> {
        let id = id.trim().parse().ok()?;
        let mut fields = BTreeMap::new();
        for line in format.lines() {
            let line = line.trim();
            let Some(rest) = line.strip_prefix("field:") else {
                continue;
            };
            // `field:pid_t pid;	offset:8;	size:4;	signed:1;`
            let mut parts = rest.split(';').map(str::trim);
            let decl = parts.next()?;
            let name = decl
                .rsplit(|c: char| c.is_whitespace() || c == '*')
                .next()?
                .split('[')
                .next()?
                .to_string();
            let mut f = Field {
                offset: 0,
                size: 0,
                signed: false,
            };
            for p in parts {
                if let Some(v) = p.strip_prefix("offset:") {
                    f.offset = v.parse().ok()?;
                } else if let Some(v) = p.strip_prefix("size:") {
                    f.size = v.parse().ok()?;
                } else if let Some(v) = p.strip_prefix("signed:") {
                    f.signed = v == "1";
                }
            }
            fields.insert(name, f);
        }
        Some(EventFormat { id, fields })
    }

    /// The integer field `name` of a raw record (None: no such field, or the
    /// record is too short).
    pub fn int(&self, raw: &[u8], name: &str) -> Option<i64> {
        let f = self.fields.get(name)?;
        let b = raw.get(f.offset..f.offset + f.size)?;
        Some(match (f.size, f.signed) {
            (1, true) => b[0] as i8 as i64,
            (1, false) => b[0] as i64,
            (2, true) => i16::from_ne_bytes(b.try_into().ok()?) as i64,
            (2, false) => u16::from_ne_bytes(b.try_into().ok()?) as i64,
            (4, true) => i32::from_ne_bytes(b.try_into().ok()?) as i64,
            (4, false) => u32::from_ne_bytes(b.try_into().ok()?) as i64,
            (8, _) => i64::from_ne_bytes(b.try_into().ok()?),
            _ => return None,
        })
    }
}

/// Where tracefs is mounted, or a mount of it made for a look (detached on drop).
#[derive(Debug)]
pub struct Tracefs {
    dir: PathBuf,
    /// A mount of our own, already detached, kept open while it is read
    /// (through `dir`, its /proc/self/fd path).
    _held: Option<std::fs::File>,
}

/// A tracefs instance as a detached mount (Linux 5.2's fsopen, fsconfig and
/// fsmount; needs CAP_SYS_ADMIN): its descriptor reads as the instance's root
/// through /proc/self/fd, and it is gone when the descriptor closes, however
/// the process ends.
fn detached_tracefs() -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // The kernel's UAPI values (linux/mount.h).
    const FSOPEN_CLOEXEC: libc::c_uint = 1;
    const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
    const FSMOUNT_CLOEXEC: libc::c_uint = 1;
    const MOUNT_ATTR_NOSUID_NODEV_NOEXEC: libc::c_uint = 0x2 | 0x4 | 0x8;
    let check = |r: libc::c_long| {
        if r < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(r as libc::c_int)
        }
    };
    // SAFETY: fsopen reads the NUL-terminated name and takes flags; it returns
    // a new descriptor (owned below) or -1.
    let fs =
        check(unsafe { libc::syscall(libc::SYS_fsopen, c"tracefs".as_ptr(), FSOPEN_CLOEXEC) })?;
    // SAFETY: `fs` is a descriptor fsopen just returned, owned by nothing else.
    let fs = unsafe { std::os::fd::OwnedFd::from_raw_fd(fs) };
    // SAFETY: FSCONFIG_CMD_CREATE takes no key, value or aux (null, null, 0).
    check(unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    })?;
    // SAFETY: fsmount takes the configured context's descriptor and flags; it
    // returns a new descriptor of the detached mount or -1.
    let m = check(unsafe {
        libc::syscall(
            libc::SYS_fsmount,
            fs.as_raw_fd(),
            FSMOUNT_CLOEXEC,
            MOUNT_ATTR_NOSUID_NODEV_NOEXEC,
        )
    })?;
    // SAFETY: `m` is a descriptor fsmount just returned, owned by nothing else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(m) })
}

impl Tracefs {
    /// The mounted tracefs, else a detached instance of our own (or, on a
    /// kernel before 5.2, one mounted on a fresh private directory and
    /// detached at once); mounting needs CAP_SYS_ADMIN. The error says which.
    pub fn find() -> Result<Tracefs, String> {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        for l in mounts.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() > 2 && f[2] == "tracefs" && !f[1].contains('\\') {
                return Ok(Tracefs {
                    dir: f[1].into(),
                    _held: None,
                });
            }
            if f.len() > 2 && f[2] == "debugfs" && Path::new(f[1]).join("tracing/events").is_dir() {
                return Ok(Tracefs {
                    dir: Path::new(f[1]).join("tracing"),
                    _held: None,
                });
            }
        }
        // A mount that was never attached: nothing named or mounted exists at
        // any instant, so even SIGKILL leaves nothing (a directory made to
        // mount on could be left by a kill in its few microseconds).
        if let Ok(fd) = detached_tracefs() {
            let held = std::fs::File::from(fd);
            return Ok(Tracefs {
                dir: PathBuf::from(format!("/proc/self/fd/{}", held.as_raw_fd())),
                _held: Some(held),
            });
        }
        use nix::mount::{mount, MsFlags};
        use std::os::unix::fs::DirBuilderExt;
        let dir = std::env::temp_dir().join(format!(".tracefs-look-{}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| {
                format!(
                    "tracefs is not mounted and {} cannot be made: {e}",
                    dir.display()
                )
            })?;
        let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
        if let Err(e) = mount(Some("nodev"), &dir, Some("tracefs"), flags, None::<&str>) {
            let _ = std::fs::remove_dir(&dir);
            return Err(format!(
                "tracefs is not mounted and cannot be ({e}: mounting needs CAP_SYS_ADMIN; \
                 `mount -t tracefs nodev /sys/kernel/tracing` as root)"
            ));
        }
        // Held by a descriptor, then detached at once: it is read through the
        // descriptor, and nothing stays mounted even if the process is killed.
        let held = std::fs::File::open(&dir);
        let _ = nix::mount::umount2(&dir, nix::mount::MntFlags::MNT_DETACH);
        let _ = std::fs::remove_dir(&dir);
        let held = held.map_err(|e| format!("tracefs mounted but not readable: {e}"))?;
        Ok(Tracefs {
            dir: PathBuf::from(format!("/proc/self/fd/{}", held.as_raw_fd())),
            _held: Some(held),
        })
    }

    /// Whether its events can be read here (tracefs is root's alone by default).
    pub fn readable(&self) -> Result<(), String> {
        std::fs::read_dir(self.dir.join("events"))
            .map(|_| ())
            .map_err(|e| {
                format!(
                    "tracefs's events cannot be read ({e}): tracing the scheduler needs root \
                     or CAP_PERFMON"
                )
            })
    }

    /// The format of tracepoint `sys:name` (None: this kernel lacks it).
    pub fn event(&self, sys: &str, name: &str) -> Option<EventFormat> {
        let d = self.dir.join("events").join(sys).join(name);
        let id = std::fs::read_to_string(d.join("id")).ok()?;
        let format = std::fs::read_to_string(d.join("format")).ok()?;
        EventFormat::parse(&id, &format)
    }
}

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

    const SWITCH: &str = "name: sched_switch
ID: 316
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
	field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
	field:int prev_prio;	offset:28;	size:4;	signed:1;
	field:long prev_state;	offset:32;	size:8;	signed:1;
	field:char next_comm[16];	offset:40;	size:16;	signed:0;
	field:pid_t next_pid;	offset:56;	size:4;	signed:1;
	field:int next_prio;	offset:60;	size:4;	signed:1;
";

    #[test]
    fn a_format_gives_each_field_its_place() {
        let f = EventFormat::parse("316\n", SWITCH).unwrap();
        assert_eq!(f.id, 316);
        assert_eq!(
            f.fields["next_pid"],
            Field {
                offset: 56,
                size: 4,
                signed: true
            }
        );
        assert_eq!(f.fields["prev_comm"].size, 16);
        let mut raw = vec![0u8; 64];
        raw[..2].copy_from_slice(&316u16.to_ne_bytes());
        raw[56..60].copy_from_slice(&(-7i32).to_ne_bytes());
        raw[24..28].copy_from_slice(&4242i32.to_ne_bytes());
        assert_eq!(f.int(&raw, "next_pid"), Some(-7));
        assert_eq!(f.int(&raw, "prev_pid"), Some(4242));
        assert_eq!(f.int(&raw, "common_type"), Some(316));
        assert_eq!(f.int(&raw[..30], "next_pid"), None);
        assert_eq!(f.int(&raw, "nothing"), None);
    }

    /// As root, a tracepoint samples this thread's own system calls, stamped
    /// on the clock `now_ns` reads; the rings are empty afterwards.
    #[test]
    fn sys_enter_samples_are_on_the_monotonic_clock() {
        let tfs = match Tracefs::find() {
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
