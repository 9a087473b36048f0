//! tracefs, read: where it is mounted (or a detached mount of our own), each
//! tracepoint's id and field layout (`events/SYS/NAME/{id,format}`), and whether
//! it answers at all.

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

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

    /// Its root directory (a `/proc/self/fd` path for a mount of our own).
    pub fn dir(&self) -> &Path {
        &self.dir
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

    /// Whether tracefs answers: one event's format is read (the read takes the
    /// kernel's event lock, as every tracer's setup does) by a child process,
    /// within 2 s. Err(why) when it does not: a kernel task died holding that
    /// lock (an oops), and every tracer would wait for it in an uninterruptible
    /// sleep until the machine restarts. The child is left to that sleep, its
    /// output unread; the answer is kept for the process.
    pub fn answers(&self) -> Result<(), String> {
        static ANSWER: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
        ANSWER
            .get_or_init(|| self.ask(std::time::Duration::from_secs(2)))
            .clone()
    }

    fn ask(&self, limit: std::time::Duration) -> Result<(), String> {
        // A mount of our own is read through our descriptor: the child's path to it.
        let dir = self.dir.to_string_lossy().replacen(
            "/proc/self/",
            &format!("/proc/{}/", std::process::id()),
            1,
        );
        let path = Path::new(&dir).join("events/sched/sched_switch/format");
        let stuck = |path: &Path| {
            format!(
                "the kernel's tracing does not answer (reading {} took over {} s: a kernel \
                 task died holding tracing's lock, see dmesg; it clears when the machine \
                 restarts)",
                path.display(),
                limit.as_secs()
            )
        };
        // An earlier look still asleep in that read says so already: no new
        // child is left to the same sleep.
        if let Some(p) = stuck_look(limit) {
            return Err(stuck(&p));
        }
        // The child needs no environment (and carries none of ours).
        let cat = ["/usr/bin/cat", "/bin/cat"]
            .into_iter()
            .find(|c| Path::new(c).exists())
            .unwrap_or("cat");
        let child = std::process::Command::new(cat)
            .env_clear()
            .arg(&path)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        // No cat to ask with: nothing is known, and tracing goes ahead.
        let Ok(mut child) = child else { return Ok(()) };
        let t = std::time::Instant::now();
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                return Ok(());
            }
            if t.elapsed() > limit {
                return Err(stuck(&path));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// The format of tracepoint `sys:name` (None: this kernel lacks it).
    pub fn event(&self, sys: &str, name: &str) -> Option<EventFormat> {
        let d = self.dir.join("events").join(sys).join(name);
        let id = std::fs::read_to_string(d.join("id")).ok()?;
        let format = std::fs::read_to_string(d.join("format")).ok()?;
        EventFormat::parse(&id, &format)
    }
}

/// A look of an earlier run (`cat …/events/sched/sched_switch/format`) still in an
/// uninterruptible sleep after `limit`: its path. None: no such look.
fn stuck_look(limit: std::time::Duration) -> Option<PathBuf> {
    let tick = 100.0; // USER_HZ on every Linux
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).filter(|a| !a.is_empty()).collect();
        let is_look = args.len() == 2
            && args[0].ends_with(b"cat")
            && args[1].ends_with(b"events/sched/sched_switch/format");
        if !is_look {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After the name: state is the 1st field, start time (ticks) the 20th.
        let started = f
            .get(19)
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(uptime * tick);
        if f.first() == Some(&"D") && uptime - started / tick > limit.as_secs_f64() {
            return Some(PathBuf::from(String::from_utf8_lossy(args[1]).into_owned()));
        }
    }
    None
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
}
